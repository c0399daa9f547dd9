import type { CatalogEntry } from './catalog-entry';
import type { TokenizerFamily } from './types';

const SEED = 'seed 000 MaxInputTokens table';

/** Builds an Ollama row; `library` names the model's page on https://ollama.com/library. */
function ollama(
  family: string,
  displayName: string,
  maxInputTokens: number,
  tokenizer: TokenizerFamily,
  seedRow: string | null,
  library: string,
  patterns: RegExp[],
): CatalogEntry {
  const docs = `https://ollama.com/library/${library}`;
  return {
    family: `ollama-${family}`,
    displayName: `${displayName} (Ollama)`,
    providers: ['ollama'],
    maxInputTokens,
    tokenizer,
    source: seedRow === null ? `not in the seed table; ${docs}` : `${SEED}; ${docs}`,
    seedRow,
    patterns,
  };
}

const ROW_1M = 'Ollama | Llama 4 | 1048576';
const ROW_256K = 'Ollama | Gemma 4 (26B/31B), Qwen3-Coder | 262144';
const ROW_128K =
  'Ollama | Qwen 3.x / 2.x, Llama 3.x, DeepSeek R1, Gemma 3, Gemma 4 (small), GPT-OSS, Mistral NeMo / Small | 128000';
const ROW_32K = 'Ollama | Mistral 7B | 32768';
const ROW_16K = 'Ollama | Phi-4, Code Llama, DeepSeek Coder | 16384';
const ROW_8K = 'Ollama | Llama 3, Gemma 1 / 2, CodeGemma, SmolLM2 | 8192';
const ROW_4K = 'Ollama | Llama 2, OLMo 2 | 4096';

/**
 * Catalog rows for Ollama, one per family of the seed 000 table's Ollama rows (windows in tokens).
 *
 * Patterns run against the normalised tag `name[:tag]` (lowercase, registry/namespace path removed).
 * Order matters where names share a prefix: `qwen3-coder` before `qwen3`, `gemma4:31b` before
 * `gemma4`, `llama3.1` (3.x, 128000) before `llama3` (Llama 3, 8192), `mistral-nemo` before `mistral`.
 */
export const OLLAMA_CATALOG: readonly CatalogEntry[] = [
  ollama('llama-4', 'Llama 4', 1048576, 'llama3', ROW_1M, 'llama4', [/^llama4(:|$)/]),
  ollama('gemma-4-large', 'Gemma 4 (26B / 31B)', 262144, 'gemma', ROW_256K, 'gemma4', [/^gemma4:(26b|31b)/]),
  ollama('qwen3-coder', 'Qwen3-Coder', 262144, 'qwen', ROW_256K, 'qwen3-coder', [/^qwen3-coder(:|$)/]),
  ollama('qwen', 'Qwen 3.x / 2.x', 128000, 'qwen', ROW_128K, 'qwen3', [/^qwen[23](\.\d+)?([:-]|$)/]),
  ollama('llama-3.x', 'Llama 3.x', 128000, 'llama3', ROW_128K, 'llama3.1', [/^llama3\.\d+([:-]|$)/]),
  ollama('deepseek-r1', 'DeepSeek R1', 128000, 'deepseek', ROW_128K, 'deepseek-r1', [/^deepseek-r1(:|$)/]),
  // Gemma 3 1B and 270M publish 32K, not the 128K of the larger sizes; not a seed row.
  ollama('gemma-3-small', 'Gemma 3 (1B / 270M)', 32768, 'gemma', null, 'gemma3', [/^gemma3:(1b|270m)/]),
  ollama('gemma-3', 'Gemma 3', 128000, 'gemma', ROW_128K, 'gemma3', [/^gemma3(:|$)/]),
  ollama('gemma-4-small', 'Gemma 4 (small)', 128000, 'gemma', ROW_128K, 'gemma4', [/^gemma4(:|$)/]),
  ollama('gpt-oss', 'GPT-OSS', 128000, 'gptoss', ROW_128K, 'gpt-oss', [/^gpt-oss(:|$)/]),
  ollama('mistral-nemo-small', 'Mistral NeMo / Small', 128000, 'mistral', ROW_128K, 'mistral-nemo', [
    /^mistral-(nemo|small)/,
  ]),
  ollama('mistral-7b', 'Mistral 7B', 32768, 'mistral', ROW_32K, 'mistral', [/^mistral(:|$)/]),
  ollama('phi-4', 'Phi-4', 16384, 'unknown', ROW_16K, 'phi4', [/^phi4(:|$)/]),
  ollama('code-llama', 'Code Llama', 16384, 'llama2', ROW_16K, 'codellama', [/^codellama(:|$)/]),
  ollama('deepseek-coder', 'DeepSeek Coder', 16384, 'unknown', ROW_16K, 'deepseek-coder', [/^deepseek-coder(:|$)/]),
  ollama('llama-3', 'Llama 3', 8192, 'llama3', ROW_8K, 'llama3', [/^llama3(:|$)/]),
  ollama('gemma-1-2', 'Gemma 1 / 2', 8192, 'unknown', ROW_8K, 'gemma2', [/^gemma2?(:|$)/]),
  ollama('codegemma', 'CodeGemma', 8192, 'unknown', ROW_8K, 'codegemma', [/^codegemma(:|$)/]),
  ollama('smollm2', 'SmolLM2', 8192, 'unknown', ROW_8K, 'smollm2', [/^smollm2(:|$)/]),
  ollama('llama-2', 'Llama 2', 4096, 'llama2', ROW_4K, 'llama2', [/^llama2([:-]|$)/]),
  ollama('olmo-2', 'OLMo 2', 4096, 'unknown', ROW_4K, 'olmo2', [/^olmo2(:|$)/]),
];
