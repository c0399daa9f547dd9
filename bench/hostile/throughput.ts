/**
 * Counting throughput of o200k_base (issue 10, item 4): our counter (`TiktokenCounter`, RankedBpe over
 * js-tiktoken's rank data) against js-tiktoken's own encoder, tiktoken (OpenAI's Rust core as WASM)
 * and gpt-tokenizer, over 1 MB (UTF-8) of English and 1 MB of Chinese real messages, one message at a
 * time. Every engine's token total is reported too, so a faster engine that counts differently shows.
 */
import { performance } from 'node:perf_hooks';
import { get_encoding } from 'tiktoken';
import { TiktokenCounter, tiktokenEncoder } from '@ask/token-counting';
import { corpusMessages } from '@ask/token-counting/testing';

/** One engine on one text kind. */
export interface ThroughputRow {
  engine: string;
  kind: 'english' | 'chinese';
  bytes: number;
  messages: number;
  tokens: number;
  /** Median of the timed passes (`passesMs`), MB (10^6 bytes of UTF-8) per second. */
  mbPerSecond: number;
  passesMs: number[];
}

/** The messages of `kind` in corpus order until they hold `bytes` of UTF-8, cycling when the data is shorter. */
function sampleOf(dataDir: string, kind: 'english' | 'chinese', bytes: number): { texts: string[]; cycled: boolean } {
  const all = corpusMessages({ dataDir })
    .filter((m) => m.kind === kind)
    .map((m) => m.text);
  const texts: string[] = [];
  let total = 0;
  let cycled = false;
  for (let i = 0; total < bytes; i += 1) {
    if (i === all.length) {
      i = 0;
      cycled = true;
    }
    const text = all[i];
    texts.push(text);
    total += Buffer.byteLength(text, 'utf8');
  }
  return { texts, cycled };
}

interface GptTokenizer {
  encode(text: string, options: { allowedSpecial: Set<string>; disallowedSpecial: Set<string> }): number[];
}

/**
 * Times each engine over each sample: a warm-up pass over the first 5% of the messages, then
 * `passes` full passes (fewer when they pass 60 s); the median pass gives MB/s.
 * @returns the rows, and whether a sample had to cycle the messages to reach 1 MB (fixtures only).
 */
export function countingThroughput(
  dataDir: string,
  passes = 3,
): { rows: ThroughputRow[]; cycled: Record<string, boolean> } {
  const ours = new TiktokenCounter('o200k_base');
  const js = tiktokenEncoder('o200k_base');
  const wasm = get_encoding('o200k_base');
  // Required: the package's types resolve only under node16 module resolution, not this repo's.
  const gpt = require('gpt-tokenizer/encoding/o200k_base') as GptTokenizer;
  const noSpecial = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
  const engines: Array<[string, (text: string) => number]> = [
    ['ours (TiktokenCounter, RankedBpe)', (t) => ours.countText(t)],
    ['js-tiktoken 1.0.21', (t) => js.encode(t, [], []).length],
    ['tiktoken 1.0.22 (WASM)', (t) => wasm.encode_ordinary(t).length],
    ['gpt-tokenizer 4.0.0', (t) => gpt.encode(t, noSpecial).length],
  ];
  const rows: ThroughputRow[] = [];
  const cycled: Record<string, boolean> = {};
  try {
    for (const kind of ['english', 'chinese'] as const) {
      const sample = sampleOf(dataDir, kind, 1_000_000);
      cycled[kind] = sample.cycled;
      const bytes = sample.texts.reduce((n, t) => n + Buffer.byteLength(t, 'utf8'), 0);
      for (const [engine, count] of engines) {
        for (const text of sample.texts.slice(0, Math.ceil(sample.texts.length / 20))) count(text);
        const passesMs: number[] = [];
        let tokens = 0;
        // The slowest engine (js-tiktoken on Chinese, ~30 s a pass here) stops after 60 s of passes.
        for (let p = 0; p < passes && passesMs.reduce((a, b) => a + b, 0) < 60_000; p += 1) {
          tokens = 0;
          const t0 = performance.now();
          for (const text of sample.texts) tokens += count(text);
          passesMs.push(Math.round(performance.now() - t0));
        }
        const median = [...passesMs].sort((a, b) => a - b)[Math.floor(passesMs.length / 2)];
        rows.push({
          engine,
          kind,
          bytes,
          messages: sample.texts.length,
          tokens,
          mbPerSecond: Math.round((bytes / 1e6 / (median / 1000)) * 100) / 100,
          passesMs,
        });
        console.log(`counting ${kind} ${engine}: ${rows[rows.length - 1].mbPerSecond} MB/s, ${tokens} tokens`);
      }
    }
  } finally {
    wasm.free();
  }
  return { rows, cycled };
}
