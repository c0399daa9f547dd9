/**
 * Test and bench support (not exported from the lib): the reference tokenizers every estimate is checked
 * against, each as a counter with its own chat framing.
 */
import { LocalTokenizerKey } from '../local-tokenizers';
import { localTokenizerCounter } from '../local-tokenizer-counter';
import { TiktokenCounter } from '../tiktoken-counter';
import type { TokenCounter } from '../token-counter';

export interface ReferenceTokenizer {
  /** Short name for tables: o200k, cl100k, llama3, … */
  name: string;
  counter: TokenCounter;
}

const LOCAL_REFERENCES: ReadonlyArray<[string, LocalTokenizerKey]> = [
  ['llama3', 'llama3'],
  ['qwen3', 'qwen3'],
  ['gemma3', 'gemma3'],
  ['deepseek_v3', 'deepseek_v3'],
  ['gptoss', 'gptoss'],
  ['claude', 'claude'],
  ['gemini', 'gemini'],
  ['mistral-spm', 'mistral-spm'],
  ['mistral-tekken', 'mistral-tekken'],
];

/** Every tokenizer available offline: o200k_base, cl100k_base and the bundled ones. */
export function referenceTokenizers(): ReferenceTokenizer[] {
  return [
    { name: 'o200k', counter: new TiktokenCounter('o200k_base') },
    { name: 'cl100k', counter: new TiktokenCounter('cl100k_base') },
    ...LOCAL_REFERENCES.map(([name, key]) => ({ name, counter: localTokenizerCounter(key) })),
  ];
}
