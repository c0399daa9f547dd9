import { tiktokenCounter } from '@ask/token-counting';

/**
 * Tokens of `text` under o200k_base (GPT-4o / GPT-5's encoding), the chunker's unit: libs/token-counting's
 * exact counter (bounded cost per character, so a document of one long run is chunked in linear time;
 * the ranks load once per process). Special-token text such as `<|endoftext|>` is counted as ordinary
 * text, never rejected.
 */
export function countTokens(text: string): number {
  return text.length === 0 ? 0 : tiktokenCounter('o200k_base').countText(text);
}
