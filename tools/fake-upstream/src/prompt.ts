import { type ProviderId, resolveModel } from '@ask/model-catalog';
import { Tiktoken } from 'js-tiktoken/lite';

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
export const FAKE_ANSWER = FAKE_ANSWER_CHUNKS.join('');

/** Tokens each message adds beyond its text, and once per request (OpenAI's chat framing). */
const PER_MESSAGE_TOKENS = 3;
const PER_REQUEST_TOKENS = 3;

let o200k: Tiktoken | undefined;

/** The o200k_base encoder (js-tiktoken's bundled ranks), loaded on first use (~1 s). */
function encoder(): Tiktoken {
  if (!o200k) {
    const ranks = require('js-tiktoken/ranks/o200k_base');
    o200k = new Tiktoken(ranks.default ?? ranks);
  }
  return o200k;
}

/**
 * Tokens of a text as the fake counts it: the real o200k_base tokenizer (js-tiktoken). It is exact for
 * OpenAI models and a real BPE count for the others, which is what the fake needs to enforce windows
 * deterministically.
 */
export function countTextTokens(text: string): number {
  return text.length === 0 ? 0 : encoder().encode(text).length;
}

/** Prompt tokens of a request: Σ (text + 3) + 3, in tokens. */
export function countPromptTokens(messages: readonly FakeMessage[]): number {
  return messages.reduce((sum, m) => sum + countTextTokens(m.content) + PER_MESSAGE_TOKENS, PER_REQUEST_TOKENS);
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
