/**
 * Measures one counter's load in a fresh process: time of its first count (which loads the tokenizer)
 * and the resident memory it adds. Run by bench/counting/bench.ts, one process per counter:
 *
 *   node tools/run-ts.js bench/counting/load-one.ts hf:llama3
 *
 * Prints one JSON line {id, loadMs, rssBeforeMB, rssAfterMB, heapUsedMB}.
 */
import { CharsDiv4Counter } from '@ask/token-counting';
import { localTokenizerCounter } from '@ask/token-counting';
import { LOCAL_TOKENIZER_KEYS, LocalTokenizerKey } from '@ask/token-counting';
import { ScriptAwareCounter } from '@ask/token-counting';
import { TiktokenCounter } from '@ask/token-counting';
import type { TokenCounter } from '@ask/token-counting';

function counterFor(id: string): TokenCounter {
  if (id === 'tiktoken:o200k_base') return new TiktokenCounter('o200k_base');
  if (id === 'tiktoken:cl100k_base') return new TiktokenCounter('cl100k_base');
  if (id === 'approx:script-v1') return new ScriptAwareCounter();
  if (id === 'approx:chars4') return new CharsDiv4Counter();
  const key = id.replace(/^hf:/, '') as LocalTokenizerKey;
  if (!LOCAL_TOKENIZER_KEYS.includes(key)) throw new Error(`unknown counter ${id}`);
  return localTokenizerCounter(key);
}

const id = process.argv[2];
const gc = (globalThis as { gc?: () => void }).gc;
gc?.();
const before = process.memoryUsage();
const started = process.hrtime.bigint();
const counter = counterFor(id);
counter.countText('Hello, world.');
const loadMs = Number(process.hrtime.bigint() - started) / 1e6;
gc?.();
const after = process.memoryUsage();
process.stdout.write(
  JSON.stringify({
    id,
    loadMs: Math.round(loadMs),
    rssBeforeMB: Math.round(before.rss / 2 ** 20),
    rssAfterMB: Math.round(after.rss / 2 ** 20),
    heapUsedMB: Math.round(after.heapUsed / 2 ** 20),
  }) + '\n',
);
