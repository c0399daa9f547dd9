/**
 * Shared by the counting benches: the corpus, every reference tokenizer's true count of every message
 * (cached on disk outside the repo, keyed by a hash of the corpus, since counting 7 M characters with 11
 * tokenizers takes minutes), and the script features of every message.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FEATURE_COUNT, scriptFeatures } from '@ask/token-counting';
import { corpusMessages, CorpusMessage } from '@ask/token-counting/testing';
import { referenceTokenizers, ReferenceTokenizer } from '@ask/token-counting/testing';

export interface MeasuredCorpus {
  messages: CorpusMessage[];
  references: ReferenceTokenizer[];
  /** counts[r][m]: tokens of message m under reference r (text only, no framing). */
  counts: Int32Array[];
  /** features[m]: script features of message m. */
  features: Float64Array[];
}

const CACHE_DIR = process.env['ASK_COUNT_CACHE'] ?? join(tmpdir(), 'ask-token-counting-cache');

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

/**
 * The corpus of the data folder `dataDir` (the full data sets: `sharedDataDir()`) plus `extra`, with true
 * counts under every reference tokenizer (cached) and features.
 */
export function measureCorpus(dataDir: string, extra: CorpusMessage[] = []): MeasuredCorpus {
  // COUNTING_MAX_MESSAGES=N: an even sample of N corpus messages (bench:verify's small run), `extra` whole.
  const corpus = corpusMessages({ dataDir });
  const step = Math.max(1, corpus.length / Math.max(1, Number(process.env['COUNTING_MAX_MESSAGES'] ?? corpus.length)));
  const sample = step <= 1 ? corpus : corpus.filter((_, i) => Math.floor(i / step) !== Math.floor((i - 1) / step));
  const messages = [...sample, ...extra];
  const references = referenceTokenizers();
  mkdirSync(CACHE_DIR, { recursive: true });
  const keys = messages.map((m) => createHash('sha1').update(m.text).digest('base64').slice(0, 16));
  const counts: Int32Array[] = [];
  for (const ref of references) {
    // One file per tokenizer, keyed by a hash of each message's text, so a changed corpus recounts only new text.
    const file = join(CACHE_DIR, `${ref.name}.json`);
    const cached: Record<string, number> = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
    const started = Date.now();
    let fresh = 0;
    const c = new Int32Array(messages.length);
    messages.forEach((m, i) => {
      let n = cached[keys[i]];
      if (n === undefined) {
        n = ref.counter.countText(m.text);
        cached[keys[i]] = n;
        fresh++;
      }
      c[i] = n;
    });
    if (fresh > 0) {
      writeFileSync(file, JSON.stringify(cached));
      log(`counted ${fresh} new messages with ${ref.name} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    }
    counts.push(c);
  }
  const features = messages.map((m) => scriptFeatures(m.text));
  return { messages, references, counts, features };
}

/** Σ rate × feature for one message (before the ceiling the counter applies). */
export function dot(features: Float64Array, rates: Float64Array): number {
  let s = 0;
  for (let i = 0; i < FEATURE_COUNT; i++) s += features[i] * rates[i];
  return s;
}

/** The q-quantile (0…1) of `values` (nearest rank on a sorted copy). */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}
