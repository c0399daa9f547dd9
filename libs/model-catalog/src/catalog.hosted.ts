import type { CatalogEntry } from './catalog-entry';

const SEED = 'seed 000 MaxInputTokens table';
const ANTHROPIC_DOCS = 'https://docs.claude.com/en/docs/about-claude/models/overview';
const OPENAI_DOCS = 'https://platform.openai.com/docs/models';
const VERTEX_DOCS = 'https://cloud.google.com/vertex-ai/generative-ai/docs/models';
const BEDROCK_DOCS = 'https://docs.aws.amazon.com/bedrock/latest/userguide/models-supported.html';

/**
 * Catalog rows for the hosted providers: Anthropic (direct, Bedrock, Vertex, Azure AI Foundry),
 * OpenAI and Azure AI Foundry OpenAI-wire models, Vertex Gemini and the Bedrock open-weight families.
 * Every window is tokens, copied from the seed 000 MaxInputTokens table row named in `seedRow`.
 *
 * Patterns run against the normalised id: lowercase, path/ARN prefix and Bedrock cross-region prefix
 * (`us.`, `eu.`, `global.`…) removed, so `us.anthropic.claude-sonnet-4-5-20250929-v1:0` is tested as
 * `anthropic.claude-sonnet-4-5-20250929-v1:0`.
 */
export const HOSTED_CATALOG: readonly CatalogEntry[] = [
  {
    family: 'claude-4',
    displayName: 'Claude 4.x (Opus / Sonnet / Haiku)',
    providers: ['anthropic', 'bedrock', 'vertex', 'azure-foundry'],
    maxInputTokens: 200000,
    tokenizer: 'claude',
    source: `${SEED}; ${ANTHROPIC_DOCS}`,
    seedRow: 'Anthropic Claude (direct, Bedrock, Vertex, Azure Foundry) | Claude 4.x (Opus / Sonnet / Haiku) | 200000',
    // claude-sonnet-4-6, claude-opus-4-1-20250805, anthropic.claude-…-v1:0 (Bedrock), claude-sonnet-4-5@20250929 (Vertex)
    patterns: [/^(anthropic\.)?claude-(opus|sonnet|haiku)-4(?!\d)/],
  },
  {
    // Not a seed row: the chat-tuned GPT-5 snapshots publish a 128K window, not the family's 400K.
    family: 'gpt-5-chat',
    displayName: 'GPT-5 Chat (gpt-5-chat-latest and successors)',
    providers: ['openai', 'azure-foundry'],
    maxInputTokens: 128000,
    tokenizer: 'o200k_base',
    source: `not in the seed table; ${OPENAI_DOCS}/gpt-5-chat-latest (128,000-token context window)`,
    seedRow: null,
    patterns: [/^gpt-5(\.\d+)?-chat/],
  },
  {
    family: 'gpt-5',
    displayName: 'GPT-5 family',
    providers: ['openai', 'azure-foundry'],
    maxInputTokens: 400000,
    tokenizer: 'o200k_base',
    source: `${SEED}; ${OPENAI_DOCS}/gpt-5`,
    seedRow: 'OpenAI / Azure Foundry | GPT-5 family | 400000',
    patterns: [/^gpt-5(?!\d)/],
  },
  {
    family: 'gpt-4.1',
    displayName: 'GPT-4.1 family',
    providers: ['openai', 'azure-foundry'],
    maxInputTokens: 1000000,
    tokenizer: 'o200k_base',
    source: `${SEED}; ${OPENAI_DOCS}/gpt-4.1`,
    seedRow: 'OpenAI / Azure Foundry | GPT-4.1 family | 1000000',
    patterns: [/^gpt-4\.1(?!\d)/],
  },
  {
    family: 'gpt-4o',
    displayName: 'GPT-4o family',
    providers: ['openai', 'azure-foundry'],
    maxInputTokens: 128000,
    tokenizer: 'o200k_base',
    source: `${SEED}; ${OPENAI_DOCS}/gpt-4o`,
    seedRow: 'OpenAI / Azure Foundry | GPT-4o family | 128000',
    patterns: [/^(chatgpt|gpt)-4o(?![a-z\d])/],
  },
  {
    family: 'o-series',
    displayName: 'o-series (o3 / o4-mini)',
    providers: ['openai'],
    maxInputTokens: 200000,
    tokenizer: 'o200k_base',
    source: `${SEED}; ${OPENAI_DOCS}/o3`,
    seedRow: 'OpenAI | o-series (o3 / o4-mini) | 200000',
    patterns: [/^o[34](-|$)/],
  },
  {
    family: 'gemini',
    displayName: 'Gemini 1.5 / 2.x',
    providers: ['vertex'],
    maxInputTokens: 1000000,
    tokenizer: 'gemini',
    source: `${SEED}; ${VERTEX_DOCS}`,
    seedRow: 'Vertex AI | Gemini 1.5 / 2.x | 1000000',
    patterns: [/^gemini-(1\.5|2(\.\d+)?)-/],
  },
  {
    family: 'bedrock-llama-4-maverick',
    displayName: 'Llama 4 Maverick (Bedrock)',
    providers: ['bedrock'],
    maxInputTokens: 1000000,
    tokenizer: 'llama3',
    source: `${SEED}; ${BEDROCK_DOCS}`,
    seedRow: 'Bedrock | Llama 4 Maverick | 1000000',
    patterns: [/^meta\.llama4-maverick/],
  },
  {
    family: 'bedrock-llama-3.x',
    displayName: 'Llama 3.x (Bedrock)',
    providers: ['bedrock'],
    maxInputTokens: 128000,
    tokenizer: 'llama3',
    source: `${SEED}; ${BEDROCK_DOCS}`,
    seedRow: 'Bedrock | Llama 3.x, Qwen 3.x, DeepSeek R1, Mistral Large | 128000',
    // meta.llama3-1-70b-instruct-v1:0, meta.llama3-2-90b-…, meta.llama3-3-70b-…
    patterns: [/^meta\.llama3-[1-9]-/],
  },
  {
    // Not a seed row: the original Llama 3 8B/70B Instruct on Bedrock have an 8K window; without this row
    // they would fall to the 32000 unknown default, which is larger than the model accepts.
    family: 'bedrock-llama-3',
    displayName: 'Llama 3 (Bedrock, 8B / 70B Instruct)',
    providers: ['bedrock'],
    maxInputTokens: 8192,
    tokenizer: 'llama3',
    source: `not in the seed table; ${BEDROCK_DOCS} (Meta Llama 3 Instruct: 8K context)`,
    seedRow: null,
    patterns: [/^meta\.llama3-(8|70)b/],
  },
  {
    family: 'bedrock-qwen-3',
    displayName: 'Qwen 3.x (Bedrock)',
    providers: ['bedrock'],
    maxInputTokens: 128000,
    tokenizer: 'qwen',
    source: `${SEED}; ${BEDROCK_DOCS}`,
    seedRow: 'Bedrock | Llama 3.x, Qwen 3.x, DeepSeek R1, Mistral Large | 128000',
    patterns: [/^qwen\.qwen3/],
  },
  {
    family: 'bedrock-deepseek-r1',
    displayName: 'DeepSeek R1 (Bedrock)',
    providers: ['bedrock'],
    maxInputTokens: 128000,
    tokenizer: 'deepseek',
    source: `${SEED}; ${BEDROCK_DOCS}`,
    seedRow: 'Bedrock | Llama 3.x, Qwen 3.x, DeepSeek R1, Mistral Large | 128000',
    patterns: [/^deepseek\.r1/],
  },
  {
    family: 'bedrock-mistral-large',
    displayName: 'Mistral Large (Bedrock)',
    providers: ['bedrock'],
    maxInputTokens: 128000,
    tokenizer: 'mistral',
    source: `${SEED}; ${BEDROCK_DOCS}`,
    seedRow: 'Bedrock | Llama 3.x, Qwen 3.x, DeepSeek R1, Mistral Large | 128000',
    // mistral.mistral-large-2407-v1:0. The 24.02 snapshot has a 32K window, so it is left to the
    // conservative 32000 unknown default rather than given 128000.
    patterns: [/^mistral\.mistral-large-(?!2402)/],
  },
  {
    family: 'bedrock-mixtral-8x22b',
    displayName: 'Mixtral 8x22B (Bedrock)',
    providers: ['bedrock'],
    maxInputTokens: 65536,
    tokenizer: 'mistral',
    source: `${SEED}; ${BEDROCK_DOCS}`,
    seedRow: 'Bedrock | Mixtral 8x22B | 65536',
    patterns: [/^mistral\.mixtral-8x22b/],
  },
];
