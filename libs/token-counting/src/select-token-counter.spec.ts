import type { ModelRef, TokenizerFamily } from '@ask/model-catalog';
import { selectTokenCounter } from './select-token-counter';

interface Row {
  row: string;
  ref: ModelRef;
  tokenizer: TokenizerFamily;
  counter: string;
  exactPlan: boolean;
  remote?: 'anthropic-count-tokens' | 'vertex-count-tokens';
}

const GATEWAY = 'https://llm-gateway.internal.example/v1';

/** Seed 000 "Token counters" table, one case per row (and per model kind where a row names several). */
const SEED_ROWS: Row[] = [
  {
    row: 'Anthropic Claude (direct): /v1/messages/count_tokens',
    ref: { provider: 'anthropic', model: 'claude-sonnet-4-6' },
    tokenizer: 'claude',
    counter: 'approx:script-v1',
    exactPlan: true,
    remote: 'anthropic-count-tokens',
  },
  {
    row: 'OpenAI canonical endpoint: tiktoken, o200k_base',
    ref: { provider: 'openai', model: 'gpt-4o-mini-2024-07-18' },
    tokenizer: 'o200k_base',
    counter: 'tiktoken:o200k_base',
    exactPlan: true,
  },
  {
    row: 'OpenAI canonical endpoint: the declared encoding',
    ref: { provider: 'openai', model: 'gpt-4-0613' },
    tokenizer: 'cl100k_base',
    counter: 'tiktoken:cl100k_base',
    exactPlan: true,
  },
  {
    row: 'OpenAI canonical endpoint: unknown model falls back to o200k_base',
    ref: { provider: 'openai', model: 'gpt-7-preview' },
    tokenizer: 'unknown',
    counter: 'tiktoken:o200k_base',
    exactPlan: true,
  },
  {
    row: 'OpenAI with a custom base_url: approximation',
    ref: { provider: 'openai', model: 'gpt-4o', baseUrl: GATEWAY },
    tokenizer: 'o200k_base',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'OpenAI with a custom base_url, unknown model: approximation',
    ref: { provider: 'openai', model: 'house-model-v2', baseUrl: GATEWAY },
    tokenizer: 'unknown',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'Azure AI Foundry OpenAI-wire GPT-5: tiktoken',
    ref: { provider: 'azure-foundry', model: 'gpt-5' },
    tokenizer: 'o200k_base',
    counter: 'tiktoken:o200k_base',
    exactPlan: true,
  },
  {
    row: 'Azure AI Foundry OpenAI-wire GPT-4.1: tiktoken',
    ref: { provider: 'azure-foundry', model: 'gpt-4.1-nano' },
    tokenizer: 'o200k_base',
    counter: 'tiktoken:o200k_base',
    exactPlan: true,
  },
  {
    row: 'Azure AI Foundry OpenAI-wire GPT-4o (catalog unaware of the deployment): tiktoken',
    ref: { provider: 'azure-foundry', model: 'gpt-4o' },
    tokenizer: 'unknown',
    counter: 'tiktoken:o200k_base',
    exactPlan: true,
  },
  {
    row: 'Azure AI Foundry Claude: approximation',
    ref: { provider: 'azure-foundry', model: 'claude-opus-4-1' },
    tokenizer: 'claude',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'Azure AI Foundry Mistral whose id does not say the tokenizer: approximation',
    ref: { provider: 'azure-foundry', model: 'mistral-medium-2505' },
    tokenizer: 'mistral',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'Azure AI Foundry unknown deployment: approximation',
    ref: { provider: 'azure-foundry', model: 'prod-chat-deployment' },
    tokenizer: 'unknown',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'Bedrock Claude: approximation',
    ref: { provider: 'bedrock', model: 'anthropic.claude-opus-4-1-20250805-v1:0' },
    tokenizer: 'claude',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'Bedrock unknown model: approximation',
    ref: { provider: 'bedrock', model: 'amazon.nova-pro-v1:0' },
    tokenizer: 'unknown',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'Vertex Gemini: :countTokens',
    ref: { provider: 'vertex', model: 'gemini-2.5-pro' },
    tokenizer: 'gemini',
    counter: 'hf:gemini',
    exactPlan: true,
    remote: 'vertex-count-tokens',
  },
  {
    row: 'Vertex Claude: approximation',
    ref: { provider: 'vertex', model: 'claude-sonnet-4-6@20250929' },
    tokenizer: 'claude',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'Vertex MaaS model with no identified tokenizer: approximation',
    ref: { provider: 'vertex', model: 'publishers/ai21/models/jamba-1.5-large' },
    tokenizer: 'unknown',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'Ollama model whose tag names no bundled tokenizer: approximation',
    ref: { provider: 'ollama', model: 'phi4:14b' },
    tokenizer: 'unknown',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'Unknown provider: approximation',
    ref: { provider: 'watsonx' as ModelRef['provider'], model: 'granite-13b' },
    tokenizer: 'unknown',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'local stand-in: o200k_base',
    ref: { provider: 'local', model: 'local-echo' },
    tokenizer: 'unknown',
    counter: 'tiktoken:o200k_base',
    exactPlan: true,
  },
];

/** Issue 4: open-weight families counted exactly wherever they run, when the id identifies the family. */
const ISSUE_4_UPGRADES: Row[] = [
  // custom base_url
  {
    row: 'base_url Llama 3.3',
    ref: { provider: 'openai', model: 'meta-llama/Llama-3.3-70B-Instruct', baseUrl: GATEWAY },
    tokenizer: 'unknown',
    counter: 'hf:llama3',
    exactPlan: true,
  },
  {
    row: 'base_url Qwen 3',
    ref: { provider: 'openai', model: 'Qwen/Qwen3-32B', baseUrl: GATEWAY },
    tokenizer: 'unknown',
    counter: 'hf:qwen3',
    exactPlan: true,
  },
  {
    row: 'base_url Gemma 3',
    ref: { provider: 'openai', model: 'google/gemma-3-27b-it', baseUrl: GATEWAY },
    tokenizer: 'unknown',
    counter: 'hf:gemma3',
    exactPlan: true,
  },
  {
    row: 'base_url DeepSeek V3',
    ref: { provider: 'openai', model: 'deepseek-ai/DeepSeek-V3', baseUrl: GATEWAY },
    tokenizer: 'unknown',
    counter: 'hf:deepseek_v3',
    exactPlan: true,
  },
  {
    row: 'base_url Mistral NeMo',
    ref: { provider: 'openai', model: 'mistralai/Mistral-Nemo-Instruct-2407', baseUrl: GATEWAY },
    tokenizer: 'unknown',
    counter: 'hf:mistral-tekken',
    exactPlan: true,
  },
  {
    row: 'base_url GPT-OSS',
    ref: { provider: 'openai', model: 'openai/gpt-oss-120b', baseUrl: GATEWAY },
    tokenizer: 'unknown',
    counter: 'hf:gptoss',
    exactPlan: true,
  },
  // Azure AI Foundry
  {
    row: 'Foundry Llama 3.3',
    ref: { provider: 'azure-foundry', model: 'Llama-3.3-70B-Instruct' },
    tokenizer: 'unknown',
    counter: 'hf:llama3',
    exactPlan: true,
  },
  {
    row: 'Foundry DeepSeek R1',
    ref: { provider: 'azure-foundry', model: 'DeepSeek-R1' },
    tokenizer: 'unknown',
    counter: 'hf:deepseek_v3',
    exactPlan: true,
  },
  {
    row: 'Foundry Mistral Large 2411',
    ref: { provider: 'azure-foundry', model: 'Mistral-Large-2411' },
    tokenizer: 'mistral',
    counter: 'hf:mistral-tekken',
    exactPlan: true,
  },
  // Bedrock
  {
    row: 'Bedrock Llama 3.1',
    ref: { provider: 'bedrock', model: 'us.meta.llama3-1-70b-instruct-v1:0' },
    tokenizer: 'llama3',
    counter: 'hf:llama3',
    exactPlan: true,
  },
  {
    row: 'Bedrock Qwen 3',
    ref: { provider: 'bedrock', model: 'qwen.qwen3-32b-v1:0' },
    tokenizer: 'qwen',
    counter: 'hf:qwen3',
    exactPlan: true,
  },
  {
    row: 'Bedrock DeepSeek R1',
    ref: { provider: 'bedrock', model: 'us.deepseek.r1-v1:0' },
    tokenizer: 'deepseek',
    counter: 'hf:deepseek_v3',
    exactPlan: true,
  },
  {
    row: 'Bedrock Mistral Large 24.07',
    ref: { provider: 'bedrock', model: 'mistral.mistral-large-2407-v1:0' },
    tokenizer: 'mistral',
    counter: 'hf:mistral-spm',
    exactPlan: true,
  },
  {
    row: 'Bedrock Mixtral 8x7B',
    ref: { provider: 'bedrock', model: 'mistral.mixtral-8x7b-instruct-v0:1' },
    tokenizer: 'mistral',
    counter: 'hf:mistral-spm',
    exactPlan: true,
  },
  {
    row: 'Bedrock GPT-OSS',
    ref: { provider: 'bedrock', model: 'openai.gpt-oss-120b-1:0' },
    tokenizer: 'unknown',
    counter: 'hf:gptoss',
    exactPlan: true,
  },
  {
    row: 'Bedrock Llama 4 Maverick (tokenizer not bundled)',
    ref: { provider: 'bedrock', model: 'us.meta.llama4-maverick-17b-instruct-v1:0' },
    tokenizer: 'llama3',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  // Vertex MaaS
  {
    row: 'Vertex MaaS Llama 3.3',
    ref: { provider: 'vertex', model: 'meta/llama-3.3-70b-instruct-maas' },
    tokenizer: 'unknown',
    counter: 'hf:llama3',
    exactPlan: true,
  },
  {
    row: 'Vertex MaaS Qwen 3',
    ref: { provider: 'vertex', model: 'qwen/qwen3-235b-a22b-instruct-2507-maas' },
    tokenizer: 'unknown',
    counter: 'hf:qwen3',
    exactPlan: true,
  },
  {
    row: 'Vertex MaaS DeepSeek R1',
    ref: { provider: 'vertex', model: 'deepseek-ai/deepseek-r1-0528-maas' },
    tokenizer: 'unknown',
    counter: 'hf:deepseek_v3',
    exactPlan: true,
  },
  {
    row: 'Vertex MaaS Mistral Small 3.1',
    ref: { provider: 'vertex', model: 'mistral-small-2503' },
    tokenizer: 'unknown',
    counter: 'hf:mistral-tekken',
    exactPlan: true,
  },
  {
    row: 'Vertex MaaS Llama 4 (tokenizer not bundled)',
    ref: { provider: 'vertex', model: 'meta/llama-4-maverick-17b-128e-instruct-maas' },
    tokenizer: 'unknown',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  // Ollama
  {
    row: 'Ollama llama3.1:8b',
    ref: { provider: 'ollama', model: 'llama3.1:8b' },
    tokenizer: 'llama3',
    counter: 'hf:llama3',
    exactPlan: true,
  },
  {
    row: 'Ollama llama3 (Llama 3, 8K)',
    ref: { provider: 'ollama', model: 'llama3' },
    tokenizer: 'llama3',
    counter: 'hf:llama3',
    exactPlan: true,
  },
  {
    row: 'Ollama qwen3:14b',
    ref: { provider: 'ollama', model: 'qwen3:14b' },
    tokenizer: 'qwen',
    counter: 'hf:qwen3',
    exactPlan: true,
  },
  {
    row: 'Ollama qwen3-coder:30b',
    ref: { provider: 'ollama', model: 'qwen3-coder:30b' },
    tokenizer: 'qwen',
    counter: 'hf:qwen3',
    exactPlan: true,
  },
  {
    row: 'Ollama gemma3:27b',
    ref: { provider: 'ollama', model: 'gemma3:27b' },
    tokenizer: 'gemma',
    counter: 'hf:gemma3',
    exactPlan: true,
  },
  {
    row: 'Ollama mistral:7b',
    ref: { provider: 'ollama', model: 'mistral:7b' },
    tokenizer: 'mistral',
    counter: 'hf:mistral-spm',
    exactPlan: true,
  },
  {
    row: 'Ollama mistral-nemo',
    ref: { provider: 'ollama', model: 'mistral-nemo:12b' },
    tokenizer: 'mistral',
    counter: 'hf:mistral-tekken',
    exactPlan: true,
  },
  {
    row: 'Ollama mistral-small3.2',
    ref: { provider: 'ollama', model: 'mistral-small3.2:24b' },
    tokenizer: 'mistral',
    counter: 'hf:mistral-tekken',
    exactPlan: true,
  },
  {
    row: 'Ollama gpt-oss:20b',
    ref: { provider: 'ollama', model: 'gpt-oss:20b' },
    tokenizer: 'gptoss',
    counter: 'hf:gptoss',
    exactPlan: true,
  },
  {
    row: 'Ollama deepseek-r1:671b',
    ref: { provider: 'ollama', model: 'deepseek-r1:671b' },
    tokenizer: 'deepseek',
    counter: 'hf:deepseek_v3',
    exactPlan: true,
  },
  {
    row: 'Ollama deepseek-r1:14b (Qwen distil)',
    ref: { provider: 'ollama', model: 'deepseek-r1:14b' },
    tokenizer: 'deepseek',
    counter: 'hf:qwen3',
    exactPlan: true,
  },
  {
    row: 'Ollama deepseek-r1:70b (Llama distil)',
    ref: { provider: 'ollama', model: 'deepseek-r1:70b' },
    tokenizer: 'deepseek',
    counter: 'hf:llama3',
    exactPlan: true,
  },
  {
    row: 'Ollama deepseek-r1:8b (ambiguous distil)',
    ref: { provider: 'ollama', model: 'deepseek-r1:8b' },
    tokenizer: 'deepseek',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'Ollama deepseek-r1 (no tag means :latest, the 8B)',
    ref: { provider: 'ollama', model: 'deepseek-r1' },
    tokenizer: 'deepseek',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'Ollama llama4 (not bundled)',
    ref: { provider: 'ollama', model: 'llama4:scout' },
    tokenizer: 'llama3',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'Ollama llama2:13b (not bundled)',
    ref: { provider: 'ollama', model: 'llama2:13b' },
    tokenizer: 'llama2',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'Ollama gemma2 (not bundled)',
    ref: { provider: 'ollama', model: 'gemma2:9b' },
    tokenizer: 'unknown',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'Ollama gemma4 (not bundled)',
    ref: { provider: 'ollama', model: 'gemma4:31b' },
    tokenizer: 'gemma',
    counter: 'approx:script-v1',
    exactPlan: false,
  },
  {
    row: 'Ollama namespaced Qwen',
    ref: { provider: 'ollama', model: 'hf.co/unsloth/Qwen3-8B-GGUF:Q4_K_M' },
    tokenizer: 'unknown',
    counter: 'hf:qwen3',
    exactPlan: true,
  },
];

describe(selectTokenCounter.name, () => {
  describe('the counter table per provider', () => {
    it.each(SEED_ROWS)('$row', ({ ref, tokenizer, counter, exactPlan, remote }) => {
      const choice = selectTokenCounter(ref, tokenizer);
      expect(choice.counter.id).toBe(counter);
      expect(choice.exactPlan).toBe(exactPlan);
      expect(choice.remote).toBe(remote);
      expect(choice.reason.length).toBeGreaterThan(0);
    });
  });

  describe('open-weight families counted exactly with a bundled tokenizer', () => {
    it.each(ISSUE_4_UPGRADES)('$row → $counter', ({ ref, tokenizer, counter, exactPlan }) => {
      const choice = selectTokenCounter(ref, tokenizer);
      expect(choice.counter.id).toBe(counter);
      expect(choice.exactPlan).toBe(exactPlan);
      expect(choice.remote).toBeUndefined();
    });
  });

  it('gives an exact choice exactly when the counter is exact or a remote endpoint verifies', () => {
    for (const { ref, tokenizer } of [...SEED_ROWS, ...ISSUE_4_UPGRADES]) {
      const choice = selectTokenCounter(ref, tokenizer);
      expect(choice.exactPlan).toBe(choice.counter.exact || choice.remote !== undefined);
    }
  });

  it('never loads a tokenizer to choose one', () => {
    const started = process.memoryUsage().rss;
    selectTokenCounter({ provider: 'ollama', model: 'gemma3:27b' }, 'gemma');
    expect(process.memoryUsage().rss - started).toBeLessThan(50 * 1024 * 1024);
  });
});
