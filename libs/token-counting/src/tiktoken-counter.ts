import { Tiktoken } from 'js-tiktoken/lite';
import { BpeWork, RankedBpe } from './ranked-bpe';
import { ChatMessage, countFramedMessages, TokenCounter } from './token-counter';

/** The tiktoken encodings bundled with js-tiktoken that this service uses. */
export type TiktokenEncodingName = 'o200k_base' | 'cl100k_base';

/**
 * OpenAI chat framing, from OpenAI's cookbook "How to count tokens with tiktoken"
 * (`num_tokens_from_messages`): every message costs `tokens_per_message = 3`
 * (`<|start|>{role}<|message|>` … `<|end|>`) plus its encoded role value (`system`, `user`, `assistant`:
 * 1 token each in o200k_base and cl100k_base), and every reply is primed with 3
 * (`<|start|>assistant<|message|>`). Same figures for gpt-3.5-turbo-0613 onwards, GPT-4, GPT-4o, GPT-4.1.
 */
export const OPENAI_PER_MESSAGE_TOKENS = 3 + 1;
/** See {@link OPENAI_PER_MESSAGE_TOKENS}. */
export const OPENAI_PER_REQUEST_TOKENS = 3;

/** One encoder per encoding per process: building one parses ~200k ranks (time and memory: bench/RESULTS.md, "Token counting"). */
const encoders = new Map<TiktokenEncodingName, Tiktoken>();

function loadRanks(encoding: TiktokenEncodingName): ConstructorParameters<typeof Tiktoken>[0] {
  // Required lazily so a process that never counts with tiktoken never loads the rank tables.
  const mod =
    encoding === 'o200k_base' ? require('js-tiktoken/ranks/o200k_base') : require('js-tiktoken/ranks/cl100k_base');
  return mod.default ?? mod;
}

const bpes = new Map<TiktokenEncodingName, RankedBpe>();

/**
 * The process-wide {@link RankedBpe} counter for `encoding`, built on first use from the ranks bundled
 * in js-tiktoken (data only; the merging is ours, O(n log n) per pre-token instead of js-tiktoken's O(n²)).
 */
export function tiktokenBpe(encoding: TiktokenEncodingName): RankedBpe {
  let bpe = bpes.get(encoding);
  if (!bpe) {
    bpe = new RankedBpe(loadRanks(encoding));
    bpes.set(encoding, bpe);
  }
  return bpe;
}

/**
 * The process-wide js-tiktoken encoder for `encoding` (for token ids and decoding: benches, tests).
 * Counting never uses it: its merge loop is quadratic in a pre-token's length (tens of seconds on one long run of characters).
 */
export function tiktokenEncoder(encoding: TiktokenEncodingName): Tiktoken {
  let encoder = encoders.get(encoding);
  if (!encoder) {
    encoder = new Tiktoken(loadRanks(encoding));
    encoders.set(encoding, encoder);
  }
  return encoder;
}

/**
 * Exact counter for OpenAI models, ids `tiktoken:o200k_base` and `tiktoken:cl100k_base`: the encoding's
 * ranks bundled in js-tiktoken, merged by our {@link RankedBpe} (counts identical to tiktoken; work per
 * character bounded: at most 3 rank look-ups per UTF-8 byte and O(log n) heap steps). Texts that contain
 * special-token strings (`<|endoftext|>`) are counted as plain text, as the OpenAI API does for message
 * content. The ranks load on the first count (load time: bench/RESULTS.md, "Token counting", "Load time, memory").
 */
export class TiktokenCounter implements TokenCounter {
  readonly id: string;
  readonly exact = true;
  readonly perMessageTokens = OPENAI_PER_MESSAGE_TOKENS;
  readonly perRequestTokens = OPENAI_PER_REQUEST_TOKENS;

  constructor(readonly encoding: TiktokenEncodingName = 'o200k_base') {
    this.id = `tiktoken:${encoding}`;
  }

  /** Tokens of `text` in this encoding, without framing. */
  countText(text: string): number {
    if (text.length === 0) return 0;
    return tiktokenBpe(this.encoding).count(text);
  }

  /** Cumulative work of this encoding's counter in this process (shared by every counter of it). */
  work(): BpeWork {
    return tiktokenBpe(this.encoding).work();
  }

  /** Tokens of a chat request with OpenAI framing (3 + 1 for the role per message, 3 per request). */
  countMessages(messages: readonly ChatMessage[]): number {
    return countFramedMessages(this, messages);
  }
}
