/**
 * The engines, samples and pass timing of the cold / warm counting throughput bench
 * (bench/counting/throughput.bench.ts runs bench/counting/throughput-one.ts once per engine and kind).
 */
import { performance } from 'node:perf_hooks';
import { get_encoding } from 'tiktoken';
import { ScriptAwareCounter, TiktokenCounter, tiktokenEncoder } from '@ask/token-counting';
import { corpusMessages } from '@ask/token-counting/testing';

/** The engines compared, by the name the table prints. */
export const ENGINES = {
  'ours o200k (TiktokenCounter, RankedBpe)': () => {
    const c = new TiktokenCounter('o200k_base');
    return (t: string) => c.countText(t);
  },
  'ours approx:script-v1': () => {
    const c = new ScriptAwareCounter();
    return (t: string) => c.countText(t);
  },
  'js-tiktoken 1.0.21 o200k': () => {
    const e = tiktokenEncoder('o200k_base');
    return (t: string) => e.encode(t, [], []).length;
  },
  'tiktoken 1.0.22 (WASM) o200k': () => {
    const e = get_encoding('o200k_base');
    return (t: string) => e.encode_ordinary(t).length;
  },
  'gpt-tokenizer 4.0.0 o200k': () => {
    // Required: the package's types resolve only under node16 module resolution, not this repo's.
    const gpt = require('gpt-tokenizer/encoding/o200k_base') as {
      encode(text: string, o: { allowedSpecial: Set<string>; disallowedSpecial: Set<string> }): number[];
    };
    const none = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
    return (t: string) => gpt.encode(t, none).length;
  },
} as const;
export type EngineName = keyof typeof ENGINES;

/** One timed pass: CPU and wall ms, UTF-8 bytes and messages counted, tokens summed. */
export interface Pass {
  cpuMs: number;
  wallMs: number;
  bytes: number;
  messages: number;
  tokens: number;
}

/** What one fresh process reports. */
export interface OneRun {
  engine: EngineName;
  kind: string;
  build: { cpuMs: number; wallMs: number };
  cold: Pass;
  newText: Pass;
  warm: Pass[];
}

export function timed(texts: readonly string[], count: (t: string) => number): Pass {
  const cpu = process.cpuUsage();
  const wall = performance.now();
  let tokens = 0;
  for (const t of texts) tokens += count(t);
  const used = process.cpuUsage(cpu);
  return {
    cpuMs: Math.round((used.user + used.system) / 100) / 10,
    wallMs: Math.round((performance.now() - wall) * 10) / 10,
    bytes: texts.reduce((n, t) => n + Buffer.byteLength(t, 'utf8'), 0),
    messages: texts.length,
    tokens,
  };
}

/** Samples A and B of `kind`: consecutive messages, disjoint, up to `bytes` each (half the kind's data each when it holds less than 2 × `bytes`). */
export function samples(dataDir: string | undefined, kind: string, bytes: number): { a: string[]; b: string[] } {
  const texts = corpusMessages({ dataDir })
    .filter((m) => m.kind === kind)
    .map((m) => m.text);
  const total = texts.reduce((n, t) => n + Buffer.byteLength(t, 'utf8'), 0);
  const half = Math.min(bytes, total / 2);
  const a: string[] = [];
  const b: string[] = [];
  let taken = 0;
  for (const t of texts) {
    const into = taken < half ? a : taken < 2 * half ? b : undefined;
    if (!into) break;
    into.push(t);
    taken += Buffer.byteLength(t, 'utf8');
  }
  return { a, b };
}
