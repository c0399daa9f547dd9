import { invalidRequest } from '@ask/ask-errors';
import { detect } from 'tinyld';
import type { EmbeddingProvider } from '../types';

/** Characters of knowledge sampled for the language check: bounds its cost whatever the upload's size. */
const SAMPLE_CHARACTERS = 200_000;
/** Characters of one text looked at (tinyld is linear in its input; a text's opening tells its language). */
const TEXT_CHARACTERS = 2_000;
/** Texts shorter than this are skipped: a short text's detected language is a guess. */
const MIN_TEXT_CHARACTERS = 40;
/** Knowledge is refused when more than this share of the sampled characters is in unsupported languages. */
const MAX_UNSUPPORTED_SHARE = 0.5;
const LANGUAGE_NAMES = new Intl.DisplayNames(['en'], { type: 'language' });

/** What {@link checkEmbeddingLanguage} found: sampled characters per detected ISO 639-1 code. */
export interface LanguageShare {
  sampledCharacters: number;
  byLanguage: Record<string, number>;
}

/**
 * Detects the languages of texts about to be embedded (tinyld's n-gram detector over at most
 * 200,000 characters: the first 2,000 of each text of ≥ 40 characters, in order).
 * @returns characters per detected language; text whose language is not detected is not counted.
 */
export function detectLanguages(texts: readonly string[]): LanguageShare {
  const byLanguage: Record<string, number> = {};
  let sampledCharacters = 0;
  for (const text of texts) {
    if (sampledCharacters >= SAMPLE_CHARACTERS) break;
    const piece = text.slice(0, Math.min(TEXT_CHARACTERS, SAMPLE_CHARACTERS - sampledCharacters));
    if (piece.trim().length < MIN_TEXT_CHARACTERS) continue;
    const language = detect(piece);
    if (language === '') continue;
    byLanguage[language] = (byLanguage[language] ?? 0) + piece.length;
    sampledCharacters += piece.length;
  }
  return { sampledCharacters, byLanguage };
}

/**
 * The main language of a sample: the ISO 639-1 code with the most sampled characters (ties to the
 * lower code); null when nothing was detected.
 */
export function mainLanguage(share: LanguageShare): string | null {
  const ranked = Object.entries(share.byLanguage).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return ranked[0]?.[0] ?? null;
}

/** Characters of a document looked at for its own language (about 1.5 ms of tinyld per document). */
const DOCUMENT_CHARACTERS = 1_000;

/**
 * The language of one document: tinyld on its first 1,000 characters, as an ISO 639-1 code; null
 * when the opening is shorter than 40 characters or tinyld detects nothing.
 */
export function detectLanguage(text: string): string | null {
  const piece = text.slice(0, DOCUMENT_CHARACTERS);
  if (piece.trim().length < MIN_TEXT_CHARACTERS) return null;
  return detect(piece) || null;
}

/**
 * Refuses knowledge that is mostly in languages an embedding model does not cover, so a project never
 * gets meaningless vectors silently (an English-only model maps unrelated Chinese sentences to almost
 * the same vector). Providers without `languages` (multilingual or unknown, or a project that set
 * `embedding.allowOtherLanguages`) pass.
 * @param detected `detectLanguages(texts)` when the caller already has it (not detected again).
 * @throws AskError 400 `invalid_request` naming the main language, its share and the alternatives,
 *   when more than half of the sampled characters are in unsupported languages.
 */
export function checkEmbeddingLanguage(
  provider: Pick<EmbeddingProvider, 'provider' | 'model' | 'languages'>,
  texts: readonly string[],
  detected?: LanguageShare,
): void {
  const supported = provider.languages;
  if (supported === undefined) return;
  const { sampledCharacters, byLanguage } = detected ?? detectLanguages(texts);
  if (sampledCharacters === 0) return;
  const unsupported = Object.entries(byLanguage).filter(([language]) => !supported.includes(language));
  const unsupportedCharacters = unsupported.reduce((sum, [, characters]) => sum + characters, 0);
  if (unsupportedCharacters / sampledCharacters <= MAX_UNSUPPORTED_SHARE) return;
  const [main, characters] = unsupported.sort((a, b) => b[1] - a[1])[0];
  const share = Math.round((100 * characters) / sampledCharacters);
  throw invalidRequest(
    `knowledge is mostly ${LANGUAGE_NAMES.of(main) ?? main} (${main}: ${share}% of ${sampledCharacters} sampled characters); ` +
      `embedding model ${provider.model} (${provider.provider}) covers ${supported.join(', ')} only; ` +
      'use embedding provider "local" (lexical, any script) or a multilingual provider, ' +
      'or set embedding.allowOtherLanguages to true to embed it anyway',
  );
}
