import {
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  ValidateBy,
  type ValidationOptions,
} from 'class-validator';
import { tiktokenCounter } from '@ask/token-counting';

/** Longest question accepted, in characters. */
export const MAX_QUESTION_CHARS = 8_000;

/**
 * Longest question accepted, in tokens of tiktoken `o200k_base` (the counter of every current OpenAI
 * model and of the local stand-in). 4,000 leaves room for context and history even in an 8,192-token
 * window; text that packs more tokens than characters (rare scripts, emoji) is bounded here, not by
 * the character limit. Whether the whole prompt fits the project's model is checked later (413).
 */
export const MAX_QUESTION_TOKENS = 4_000;

/**
 * The question's tokens (o200k_base, libs/token-counting's exact counter: bounded work per character,
 * at most 3 rank look-ups per UTF-8 byte, so 8,000 characters of any script cost milliseconds); the
 * ranks load on first use.
 */
export function questionTokens(text: string): number {
  return tiktokenCounter('o200k_base').countText(text);
}

/** The count made by `validate` for one body, reused by the error message: each question is counted once. */
const counted = new WeakMap<object, { text: string; tokens: number }>();

function countOnce(object: object, text: string): number {
  const hit = counted.get(object);
  if (hit && hit.text === text) return hit.tokens;
  const tokens = questionTokens(text);
  counted.set(object, { text, tokens });
  return tokens;
}

/** A string of at most `max` o200k_base tokens (`question: must be at most 4000 tokens (o200k_base), got 4512`). */
function MaxTokens(max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'maxTokens',
      validator: {
        validate: (value: unknown, args) =>
          typeof value !== 'string' || value.length > MAX_QUESTION_CHARS || countOnce(args?.object ?? {}, value) <= max,
        defaultMessage: (args) =>
          `${args?.property} must be at most ${max} tokens (o200k_base), got ${countOnce(args?.object ?? {}, String(args?.value))}`,
      },
    },
    options,
  );
}

/**
 * Characters that show nothing: JavaScript's `\s` (ASCII and Unicode spaces, line breaks, U+FEFF) plus
 * the zero-width space, joiners and word joiner.
 */
const INVISIBLE = /^[\s\u200b-\u200d\u2060]*$/u;

/** A string with at least one visible character (`question: must contain a visible character`). */
function NotBlank(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'notBlank',
      validator: {
        validate: (value: unknown) =>
          typeof value !== 'string' || value.length > MAX_QUESTION_CHARS || !INVISIBLE.test(value),
        defaultMessage: (args) => `${args?.property} must contain a visible character (it is only whitespace)`,
      },
    },
    options,
  );
}

/** Body of `POST /api/v1/projects/:projectId/ask`. */
export class AskDto {
  // class-validator checks the bottom decorator first: the type, then emptiness, blankness, characters, tokens.
  @MaxTokens(MAX_QUESTION_TOKENS)
  @MaxLength(MAX_QUESTION_CHARS)
  @NotBlank()
  @IsNotEmpty()
  @IsString()
  question!: string;

  /** Continue this session (of the same project: another project's session is a 404); omit to start a new one. */
  @IsOptional()
  @IsUUID()
  sessionId?: string;
}

/** Answer of `POST …/ask` (202). */
export interface AskAccepted {
  askId: string;
  sessionId: string;
  /** `/api/v1/asks/{askId}/events?token=<capability token>`. */
  eventsUrl: string;
}
