import { Tiktoken } from 'js-tiktoken/lite';

let encoder: Tiktoken | null = null;

/**
 * The process-wide o200k_base encoder, built on first use from the ranks bundled in js-tiktoken
 * (`js-tiktoken/ranks/o200k_base`; no network). Building it parses ~200k ranks once (≈0.5 s).
 */
function o200k(): Tiktoken {
  if (!encoder) {
    // Required lazily so a process that never chunks never loads the rank table.
    const ranks = require('js-tiktoken/ranks/o200k_base');
    encoder = new Tiktoken(ranks.default ?? ranks);
  }
  return encoder;
}

/**
 * Tokens of `text` under o200k_base (GPT-4o / GPT-5's encoding), the chunker's unit. Special-token
 * text such as `<|endoftext|>` is counted as ordinary text, never rejected.
 */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : o200k().encode(text, [], []).length;
}
