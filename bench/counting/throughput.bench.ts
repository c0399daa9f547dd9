/**
 * Counting throughput, cold and warm: each engine built fresh in its own process, on text it has not
 * seen, beside the same engine timed again on text it has just counted.
 *
 *   node tools/run-ts.js bench/counting/throughput.bench.ts [--bytes 500000] [--runs 3] [--kinds english,chinese,arabic]
 *
 * For every engine of bench/counting/throughput-engines.ts and every text kind, `--runs` fresh Node
 * processes (bench/counting/throughput-one.ts) each build the engine, count sample B once (cold), then
 * sample A once (new text in a warm process) and B three times more (warm: the same text again). The
 * medians over the processes are reported; MB/s are UTF-8 megabytes (10^6 bytes) per second of the
 * process's CPU time (user + system), which a shared machine's other work does not inflate the way it
 * does wall time (wall time is in the JSON). Writes bench/counting/throughput-results.json and the section
 * "Counting throughput, cold and warm" of bench/RESULTS.md.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { BENCH_ROOT, commandLine, gitCommit, machine, numberArg, repoRelative, writeResultsSection } from '../common';
import { ENGINES, type EngineName, type OneRun } from './throughput-engines';

const SECTION = '## Counting throughput, cold and warm';
const BYTES = numberArg('bytes', 500_000);
const RUNS = numberArg('runs', 3);
const kindsArg = process.argv.indexOf('--kinds');
const KINDS = kindsArg >= 0 ? process.argv[kindsArg + 1].split(',') : ['english', 'chinese', 'arabic'];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mbps = (bytes: number, ms: number) => (ms > 0 ? Math.round((bytes / 1e6 / (ms / 1000)) * 100) / 100 : NaN);

function runOne(engine: EngineName, kind: string): OneRun {
  const out = execFileSync(
    process.execPath,
    [join(BENCH_ROOT, 'tools', 'run-ts.js'), join(__dirname, 'throughput-one.ts'), engine, kind, String(BYTES)],
    { cwd: BENCH_ROOT, encoding: 'utf8', env: process.env, maxBuffer: 1 << 24 },
  );
  return JSON.parse(out.trim().split('\n').pop() ?? '') as OneRun;
}

interface Row {
  engine: EngineName;
  kind: string;
  bytes: number;
  messages: number;
  tokens: number;
  buildCpuMs: number;
  coldCpuMs: number;
  newTextCpuMs: number;
  warmCpuMs: number;
  coldMBps: number;
  newTextMBps: number;
  warmMBps: number;
  runs: OneRun[];
}

function main(): void {
  const loadStart = loadavg()[0];
  const rows: Row[] = [];
  for (const kind of KINDS) {
    for (const engine of Object.keys(ENGINES) as EngineName[]) {
      const runs = Array.from({ length: RUNS }, () => runOne(engine, kind));
      const [first] = runs;
      const coldCpuMs = median(runs.map((r) => r.cold.cpuMs));
      const newTextCpuMs = median(runs.map((r) => r.newText.cpuMs));
      const warmCpuMs = median(runs.map((r) => median(r.warm.map((w) => w.cpuMs))));
      rows.push({
        engine,
        kind,
        bytes: first.cold.bytes,
        messages: first.cold.messages,
        tokens: first.cold.tokens,
        buildCpuMs: median(runs.map((r) => r.build.cpuMs)),
        coldCpuMs,
        newTextCpuMs,
        warmCpuMs,
        coldMBps: mbps(first.cold.bytes, coldCpuMs),
        newTextMBps: mbps(first.newText.bytes, newTextCpuMs),
        warmMBps: mbps(first.cold.bytes, warmCpuMs),
        runs,
      });
      const r = rows[rows.length - 1];
      console.log(`${kind} ${engine}: cold ${r.coldMBps} MB/s, new text ${r.newTextMBps}, warm ${r.warmMBps}`);
    }
  }
  const loadEnd = loadavg()[0];
  const dataDir = process.env['ASK_SHARED_DATA'] || join(BENCH_ROOT, '..', 'shared', 'data');
  // The committed excerpts by their path; the full data sets by name (where they sit is the machine's).
  const data = dataDir.startsWith(BENCH_ROOT) ? repoRelative(dataDir) : '../shared/data (the full data sets)';
  const command = `node tools/run-ts.js bench/counting/throughput.bench.ts --bytes ${BYTES} --runs ${RUNS} --kinds ${KINDS.join(',')}`;
  const run = { date: new Date().toISOString(), commit: gitCommit(), machine: machine(), command, data, rows };
  writeFileSync(join(__dirname, 'throughput-results.json'), `${JSON.stringify(run, null, 1)}\n`);

  const exact = rows.filter((r) => !r.engine.includes('approx'));
  const agree = KINDS.map((kind) => {
    const totals = new Set(exact.filter((r) => r.kind === kind).map((r) => r.tokens));
    return `${kind} ${totals.size === 1 ? 'equal' : `**differ** (${[...totals].join(' / ')})`}`;
  });
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');
  const ratio = (kind: string, engine: string, field: 'coldCpuMs' | 'warmCpuMs' | 'newTextCpuMs') => {
    const ours = rows.find((r) => r.kind === kind && r.engine.startsWith('ours o200k'));
    const wasm = rows.find((r) => r.kind === kind && r.engine.startsWith(engine));
    return ours && wasm ? ours[field] / wasm[field] : NaN;
  };
  const md = [
    SECTION,
    '',
    commandLine(
      command,
      run,
      `; data ${data}; 1-minute load average ${loadStart.toFixed(1)} at the start, ${loadEnd.toFixed(1)} at the end`,
    ),
    '',
    `Conditions: o200k_base (and the approximate counter), one message at a time, UTF-8 MB (10^6 bytes) per second of the counting process's CPU time (user + system; wall time, which waits for a core on this shared machine, is in \`bench/counting/throughput-results.json\`). Each engine is built fresh in its own Node process (${RUNS} processes per engine and kind, medians shown); per kind the messages are split into two disjoint samples A and B of up to ${(BYTES / 1e6).toFixed(2)} MB. **Cold** = the first pass of the process, over B (nothing compiled, memoised or cached); **new text** = then one pass over A, text it has not seen, in a warm process (what a long-running gateway meets); **warm** = B again (median of 3 passes: the text was just counted, so our piece memo and the engines' caches answer most of it, as in a bench that times one sample repeatedly). Build = constructing the engine and its first count, CPU ms.`,
    '',
    '| engine | text | sample | tokens | build CPU ms | cold CPU ms | cold MB/s | new text MB/s | warm MB/s | warm ÷ cold |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.engine} | ${r.kind} | ${(r.bytes / 1e6).toFixed(2)} MB, ${r.messages} messages | ${r.tokens} | ${r.buildCpuMs} | ${r.coldCpuMs} | ${f(r.coldMBps)} | ${f(r.newTextMBps)} | ${f(r.warmMBps)} | ${f(r.warmMBps / r.coldMBps)}× |`,
    ),
    '',
    `Token totals of the exact o200k engines on each sample: ${agree.join('; ')}.`,
    `Ours ÷ tiktoken WASM in CPU time (below 1: ours faster): ${KINDS.map((k) => `${k} cold ${f(ratio(k, 'tiktoken', 'coldCpuMs'))}, new text ${f(ratio(k, 'tiktoken', 'newTextCpuMs'))}, warm ${f(ratio(k, 'tiktoken', 'warmCpuMs'))}`).join('; ')}.`,
    '',
  ];
  writeResultsSection(SECTION, md.join('\n'));
}

main();
