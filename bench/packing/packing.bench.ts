/**
 * Packing against what the seed formula allows (issue 12 item 7). Real multi-turn sessions of
 * ../shared/data (corpusSessions: mt-bench-101 dialogues, oasst1-zh threads, arena-hard-en prompts with
 * code, the UDHR in 26 languages as question/answer turns) are asked turn by turn through the worker's
 * sizer (`sizePrompt` of libs/context-budget, default system prompt, no retrieved items), and each
 * request where trimming applied (at least one earlier pair dropped) is counted with the tokenizer
 * behind the model:
 *
 *   fill    = (true prompt tokens + max_tokens) ÷ window
 *   ceiling = (window − reserve − ⌈5% × window⌉ + true tokens of the system message) ÷ window
 *
 * the largest fill the seed formula allows with an exact counter (the system prompt rides in the
 * reserve). Reported: mean fill ÷ ceiling per counter kind, and requests over the window (must be 0).
 * Counter kinds: the exact counter (o200k_base for an OpenAI model: the truth is the same tokenizer);
 * the approximate estimate uncalibrated (`approx:script-v1`, 15% margin) for an unknown model behind each
 * reference tokenizer; and the same estimate calibrated per script class as the worker does it
 * (planning-memory.ts: one usage record per answered ask, `learnScriptCalibration` over the newest 50,
 * `ScriptCalibratedCounter`), before and after its first factor applies.
 *
 *   node tools/run-ts.js bench/packing/packing.bench.ts
 *
 * True counts come from the counting bench's cache (bench/counting/measure.ts) when present.
 * Writes bench/packing/results.json and the "## Packing against the seed ceiling" section of bench/RESULTS.md.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DEFAULT_MAX_TOKENS,
  DEFAULT_RESERVE,
  DEFAULT_SYSTEM_PROMPT,
  EXACT_MARGIN_PERCENT,
  sizePrompt,
} from '@ask/context-budget';
import type { ResolvedModel } from '@ask/model-catalog';
import {
  learnScriptCalibration,
  ScriptCalibratedCounter,
  type ScriptUsageRecord,
  usageRecordOf,
} from '@ask/token-counting';
import type { TokenCounter } from '@ask/token-counting';
import { CORPUS_DATA_SETS, corpusSessions, type CorpusSession } from '@ask/token-counting/testing';
import { referenceTokenizers } from '@ask/token-counting/testing';
import { gitCommit, machine, sharedDataDir, writeResultsSection } from '../common';

const DATA = sharedDataDir(CORPUS_DATA_SETS);
const SECTION = '## Packing against the seed ceiling';
const WINDOWS = [8192, 16_384];
const MAX_TOKENS = DEFAULT_MAX_TOKENS;
const TRUTHS = ['o200k', 'llama3', 'qwen3', 'mistral-spm'];
const CACHE_DIR = process.env['ASK_COUNT_CACHE'] ?? join(tmpdir(), 'ask-token-counting-cache');

/** A reference counter whose counts are read from the counting bench's cache first. */
function cached(name: string, counter: TokenCounter): TokenCounter {
  const file = join(CACHE_DIR, `${name}.json`);
  const disk: Record<string, number> = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
  const memo = new Map<string, number>();
  const countText = (text: string) => {
    let n = memo.get(text);
    if (n === undefined) {
      n = disk[createHash('sha1').update(text).digest('base64').slice(0, 16)] ?? counter.countText(text);
      memo.set(text, n);
    }
    return n;
  };
  return {
    id: counter.id,
    exact: counter.exact,
    perMessageTokens: counter.perMessageTokens,
    perRequestTokens: counter.perRequestTokens,
    countText,
    countMessages: (ms) => counter.countMessages(ms),
  };
}

const references = new Map(
  referenceTokenizers()
    .filter((r) => TRUTHS.includes(r.name))
    .map((r) => [r.name, cached(r.name, r.counter)]),
);
const truthOf = (name: string) => {
  const t = references.get(name);
  if (!t) throw new Error(`no reference ${name}`);
  return t;
};
const sessions = corpusSessions({ dataDir: DATA });

const modelOf = (window: number): ResolvedModel => ({
  provider: 'openai',
  model: 'packing-bench',
  family: 'unknown',
  displayName: 'packing bench',
  tokenizer: 'o200k_base',
  catalogWindow: window,
  window,
  source: 'bench',
  matched: false,
});

function trueTokens(truth: TokenCounter, messages: ReadonlyArray<{ content: string }>): number {
  return truth.perRequestTokens + messages.reduce((s, m) => s + truth.countText(m.content) + truth.perMessageTokens, 0);
}

interface Row {
  kind: string;
  window: number;
  truth: string;
  requests: number;
  meanFillOverCeiling: number;
  minFillOverCeiling: number;
  overflows: number;
  /** Calibrated runs only: asks answered before the first factor applied, per session (median). */
  asksToCalibrate?: number;
}

/**
 * Asks every turn of `session` in order; `plan` gives the counter for each ask (and learns from the
 * ask's true prompt size afterwards). Returns fill ÷ ceiling of every trimmed request and overflows.
 */
function runSession(
  session: CorpusSession,
  window: number,
  truth: TokenCounter,
  counterFor: () => {
    counter: TokenCounter;
    exact: boolean;
    learn?: (record: ScriptUsageRecord) => void;
    calibrated: () => boolean;
  },
): { ratios: number[]; calibratedRatios: number[]; overflows: number; firstCalibrated: number | undefined } {
  const ceiling =
    (window -
      DEFAULT_RESERVE -
      Math.ceil((window * EXACT_MARGIN_PERCENT) / 100) +
      truth.countText(DEFAULT_SYSTEM_PROMPT) +
      truth.perMessageTokens +
      truth.perRequestTokens) /
    window;
  const ratios: number[] = [];
  const calibratedRatios: number[] = [];
  let overflows = 0;
  let firstCalibrated: number | undefined;
  for (let turn = 1; turn < session.turns.length; turn++) {
    const { counter, exact, learn, calibrated } = counterFor();
    const history = session.turns.slice(0, turn).map((t, i) => ({
      message: { id: `t${i}`, question: t.question, answer: t.answer },
      questionTokens: counter.countText(t.question),
      answerTokens: counter.countText(t.answer),
    }));
    let sized;
    try {
      sized = sizePrompt({
        model: modelOf(window),
        counter,
        exact,
        maxTokens: MAX_TOKENS,
        systemPrompt: DEFAULT_SYSTEM_PROMPT,
        question: session.turns[turn].question,
        history,
        items: [],
      });
    } catch {
      continue; // the question alone does not fit: a 413, not a packing figure
    }
    const prompt = trueTokens(truth, sized.messages);
    if (prompt + MAX_TOKENS > window) overflows++;
    const isCalibrated = calibrated();
    if (isCalibrated && firstCalibrated === undefined) firstCalibrated = turn - 1;
    if (sized.keptTurns.length < history.length) {
      const ratio = (prompt + MAX_TOKENS) / window / ceiling;
      ratios.push(ratio);
      if (isCalibrated) calibratedRatios.push(ratio);
    }
    if (learn && counter instanceof ScriptCalibratedCounter) {
      const parts = sized.messages.map((m) => counter.measure(m.content));
      learn({ ...usageRecordOf(parts, sized.messages.length), reported: prompt, source: 'usage' });
    }
  }
  return { ratios, calibratedRatios, overflows, firstCalibrated };
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
const median = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : NaN);
const kindOf = (s: CorpusSession) => (s.dataSet === 'text-udhr' ? 'udhr (26 languages)' : s.kind);
const KINDS = [...new Set(sessions.map(kindOf))];
const rows: Record<string, Row[]> = { exact: [], uncalibrated: [], calibratedBefore: [], calibratedAfter: [] };

for (const window of WINDOWS) {
  for (const kind of KINDS) {
    const group = sessions.filter((s) => kindOf(s) === kind);
    // Exact: an OpenAI model counted by its own tokenizer.
    {
      const truth = truthOf('o200k');
      const all = group.map((s) =>
        runSession(s, window, truth, () => ({ counter: truth, exact: true, calibrated: () => false })),
      );
      const ratios = all.flatMap((r) => r.ratios);
      rows.exact.push({
        kind,
        window,
        truth: 'o200k',
        requests: ratios.length,
        meanFillOverCeiling: mean(ratios),
        minFillOverCeiling: Math.min(...ratios),
        overflows: all.reduce((s, r) => s + r.overflows, 0),
      });
    }
    for (const name of TRUTHS) {
      const truth = truthOf(name);
      const plain = group.map((s) =>
        runSession(s, window, truth, () => ({
          counter: new ScriptCalibratedCounter({}),
          exact: false,
          calibrated: () => false,
        })),
      );
      const pr = plain.flatMap((r) => r.ratios);
      rows.uncalibrated.push({
        kind,
        window,
        truth: name,
        requests: pr.length,
        meanFillOverCeiling: mean(pr),
        minFillOverCeiling: Math.min(...pr),
        overflows: plain.reduce((s, r) => s + r.overflows, 0),
      });
      // Calibrated: a fresh model per session; its usage records are the only evidence.
      const calibrated = group.map((s) => {
        const records: ScriptUsageRecord[] = [];
        let current = new ScriptCalibratedCounter({});
        return runSession(s, window, truth, () => {
          current = new ScriptCalibratedCounter(learnScriptCalibration([...records].reverse()));
          const counter = current;
          return {
            counter,
            exact: false,
            learn: (r) => records.push(r),
            calibrated: () => Object.keys(counter.calibration).length > 0,
          };
        });
      });
      const before = calibrated.flatMap((r) => r.ratios.slice(0, r.ratios.length - r.calibratedRatios.length));
      const after = calibrated.flatMap((r) => r.calibratedRatios);
      const asks = calibrated.map((r) => r.firstCalibrated).filter((n): n is number => n !== undefined);
      const overflows = calibrated.reduce((s, r) => s + r.overflows, 0);
      rows.calibratedBefore.push({
        kind,
        window,
        truth: name,
        requests: before.length,
        meanFillOverCeiling: mean(before),
        minFillOverCeiling: Math.min(...before),
        overflows,
        asksToCalibrate: median(asks),
      });
      rows.calibratedAfter.push({
        kind,
        window,
        truth: name,
        requests: after.length,
        meanFillOverCeiling: mean(after),
        minFillOverCeiling: Math.min(...after),
        overflows,
        asksToCalibrate: median(asks),
      });
    }
  }
  process.stderr.write(`window ${window} done\n`);
}

// ---- summary and write -----------------------------------------------------------------------------------
const pooled = (list: Row[], window: number) => {
  const r = list.filter((x) => x.window === window && x.requests > 0);
  const n = r.reduce((s, x) => s + x.requests, 0);
  return {
    requests: n,
    mean: r.reduce((s, x) => s + x.meanFillOverCeiling * x.requests, 0) / Math.max(1, n),
    overflows: r.reduce((s, x) => s + x.overflows, 0),
  };
};
const ceilingFor = (window: number) => {
  const o = truthOf('o200k');
  return (
    (window -
      DEFAULT_RESERVE -
      Math.ceil((window * EXACT_MARGIN_PERCENT) / 100) +
      o.countText(DEFAULT_SYSTEM_PROMPT) +
      o.perMessageTokens +
      o.perRequestTokens) /
    window
  );
};
const m = machine();
const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : '–');
const md: string[] = [SECTION, ''];
md.push(
  `${new Date().toISOString()} · \`node tools/run-ts.js bench/packing/packing.bench.ts\` · commit ${gitCommit()} · ${m.nproc} CPUs · Node ${process.version} · load average at the end ${loadavg()[0].toFixed(2)}`,
  '',
  `Sessions: ${sessions.length} real multi-turn sessions of ../shared/data (${KINDS.join(', ')}), every turn asked in order through \`sizePrompt\` (libs/context-budget, the worker's sizer) with the default system prompt, max_tokens ${MAX_TOKENS}, no retrieved items; only requests where trimming applied count. fill = (true prompt + max_tokens) ÷ window; ceiling = the seed formula's largest fill with an exact counter, (window − 600 − ⌈5% window⌉ + the system message's true tokens) ÷ window: ${WINDOWS.map((w) => `${f3(ceilingFor(w))} at ${w}`).join(', ')} with o200k (the issue's 0.884 / 0.917). Goals: ≥ 0.95 of the ceiling exact, ≥ 0.85 calibrated.`,
  '',
  '| counter kind | window | requests (trimmed) | mean fill ÷ ceiling | requests over the window |',
  '| --- | --- | ---: | ---: | ---: |',
);
const label: Record<string, string> = {
  exact: 'exact (o200k_base, 5% margin)',
  uncalibrated: `approx:script-v1 uncalibrated (15% margin), truth ${TRUTHS.join(' / ')}`,
  calibratedBefore: 'calibrated estimate, asks before the first factor applies',
  calibratedAfter: 'calibrated estimate, asks after it applies',
};
for (const window of WINDOWS)
  for (const key of Object.keys(rows)) {
    const p = pooled(rows[key], window);
    md.push(`| ${label[key]} | ${window} | ${p.requests} | ${f3(p.mean)} | ${p.overflows} |`);
  }
md.push(
  '',
  'Per session kind and truth tokenizer (mean fill ÷ ceiling; calibrated: before → after, median asks answered before the first factor applied):',
  '',
);
md.push(
  '| window | kind | exact | ' + TRUTHS.map((t) => `${t}: uncal. / cal. before → after (asks)`).join(' | ') + ' |',
  '| --- | --- | --- | ' + TRUTHS.map(() => '---').join(' | ') + ' |',
);
for (const window of WINDOWS)
  for (const kind of KINDS) {
    const ex = rows.exact.find((r) => r.window === window && r.kind === kind);
    const cells = TRUTHS.map((t) => {
      const u = rows.uncalibrated.find((r) => r.window === window && r.kind === kind && r.truth === t);
      const b = rows.calibratedBefore.find((r) => r.window === window && r.kind === kind && r.truth === t);
      const a = rows.calibratedAfter.find((r) => r.window === window && r.kind === kind && r.truth === t);
      return `${f3(u?.meanFillOverCeiling ?? NaN)} / ${f3(b?.meanFillOverCeiling ?? NaN)} → ${f3(a?.meanFillOverCeiling ?? NaN)} (${a?.asksToCalibrate ?? '–'})`;
    });
    md.push(`| ${window} | ${kind} | ${f3(ex?.meanFillOverCeiling ?? NaN)} | ${cells.join(' | ')} |`);
  }
md.push(
  '',
  'Why the calibrated estimate stays below the exact one: it still plans with the 15% margin (the seed gives an approximate counter 15%, and calibration does not make it exact), which alone caps fill ÷ ceiling at about 0.89 (0.887 at 8K, 0.891 at 16K); its factor is the worst recent ratio of the class, so a typical request is over-counted by the spread of the records; and a pair is dropped whole.',
);
writeFileSync(
  join(__dirname, 'results.json'),
  JSON.stringify(
    { date: new Date().toISOString(), windows: WINDOWS, maxTokens: MAX_TOKENS, truths: TRUTHS, rows },
    null,
    1,
  ) + '\n',
);
writeResultsSection(SECTION, md.join('\n'));
process.stderr.write('wrote bench/RESULTS.md (Packing against the seed ceiling), bench/packing/results.json\n');
