import { type ProviderId, resolveModel } from '@ask/model-catalog';
import { type ChatMessage, selectTokenCounter, type TokenCounter, tiktokenCounter } from '@ask/token-counting';

/** A chat prompt as the fake reads it off any wire format. */
export interface FakeMessage {
  role: string;
  content: string;
}

/** The deterministic answer every chat route streams, and the chunks it is cut into. */
export const FAKE_ANSWER_CHUNKS: readonly string[] = [
  'The fake upstream ',
  'streams this answer ',
  'in several chunks, ',
  'the same for every provider.',
];
/** The whole deterministic answer (the chunks joined). */
export const FAKE_ANSWER = FAKE_ANSWER_CHUNKS.join('');

/**
 * The tokenizer the fake counts a model's prompts with: libs/token-counting's exact counter for the
 * model's family when there is one (tiktoken for OpenAI models, the bundled Llama 3 / Qwen / Gemma /
 * DeepSeek / Mistral / GPT-OSS tokenizers for open-weight models), else the real o200k_base BPE
 * (Claude and Gemini publish no tokenizer; their local references are not exact and slow to load).
 * `baseUrl` marks an OpenAI-compatible server (vLLM, llama.cpp, Vertex MaaS): its model's own family
 * tokenizer counts, not OpenAI's.
 */
export function counterFor(provider: ProviderId, model: string, baseUrl?: string): TokenCounter {
  const choice = selectTokenCounter({ provider, model, baseUrl }, resolveModel({ provider, model }).tokenizer);
  return choice.counter.exact ? choice.counter : tiktokenCounter('o200k_base');
}

/** Tokens of a text with the model's counter (no framing). */
export function countTextTokens(provider: ProviderId, model: string, text: string, baseUrl?: string): number {
  return counterFor(provider, model, baseUrl).countText(text);
}

/** Prompt tokens of a request with the model's counter: Σ (text + per-message framing) + per-request framing. */
export function countPromptTokens(
  provider: ProviderId,
  model: string,
  messages: readonly FakeMessage[],
  baseUrl?: string,
): number {
  const normalized: ChatMessage[] = messages.map((m) => ({
    role: m.role === 'system' ? 'system' : m.role === 'assistant' || m.role === 'model' ? 'assistant' : 'user',
    content: m.content,
  }));
  return counterFor(provider, model, baseUrl).countMessages(normalized);
}

/** The context window the fake enforces for a model: the catalog's (`resolveModel`), in tokens. */
export function windowOf(provider: ProviderId, model: string): number {
  return resolveModel({ provider, model }).window;
}

/** Flattens content that may be a string or a list of text parts (OpenAI, Anthropic, Bedrock, Gemini). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => {
        if (typeof part === 'string') return part;
        if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') {
          return (part as { text: string }).text;
        }
        return '';
      })
      .join('');
  }
  return '';
}

/** A deterministic unit vector of `dimensions` numbers for a text (FNV-1a seed, mulberry32 stream). */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  let seed = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    seed ^= text.charCodeAt(i);
    seed = Math.imul(seed, 0x01000193) >>> 0;
  }
  const values: number[] = [];
  for (let i = 0; i < dimensions; i++) {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    values.push(((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5);
  }
  const norm = Math.sqrt(values.reduce((s, v) => s + v * v, 0)) || 1;
  return values.map((v) => Number((v / norm).toFixed(6)));
}
