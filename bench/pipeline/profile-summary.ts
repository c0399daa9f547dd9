/**
 * Summarises the CPU profiles that `pipeline.bench.ts --profile` recorded (one `.cpuprofile` per app,
 * over the bench's sequential and concurrent phases) into its own section of bench/RESULTS.md: per app
 * the sampled CPU per ask, the top frames by self time, the top files/packages by self time, and the
 * inclusive time of the local stand-in providers (sentence selection, lexical embedding) so the
 * stand-ins' own work is told apart from the pipeline's.
 *
 *   node tools/run-ts.js bench/pipeline/pipeline.bench.ts --profile   # records tmp/bench-pipeline-profiles/
 *   node tools/run-ts.js bench/pipeline/profile-summary.ts [--top 12]
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { machine, numberArg, writeResultsSection } from '../common';

const ROOT = resolve(__dirname, '..', '..');
const PROFILE_DIR = join(ROOT, 'tmp', 'bench-pipeline-profiles');
const SECTION = '## Pipeline CPU profiles (local providers)';
const APPS = ['api-gateway', 'retrieval-worker', 'synthesis-worker'] as const;
const TOP = numberArg('top', 12);
/** Source files of the local stand-ins, whose inclusive time is reported apart. */
const STAND_INS = [
  { label: 'local stand-in LLM (sentence selection)', file: 'libs/llm-providers/src/local/local-chat.provider.ts' },
  { label: 'local lexical embedder', file: 'libs/llm-providers/src/local/local-embedding.provider.ts' },
];

/** The parts of V8's `.cpuprofile` (Chrome DevTools format) read here. */
interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }>;
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A frame's short name: `function (repo-relative file:line)`, or `(package) function` for node_modules. */
function frameName(frame: CpuProfile['nodes'][number]['callFrame']): string {
  const fn = frame.functionName || '(anonymous)';
  if (!frame.url) return fn;
  return `${fn} (${where(frame.url)}:${frame.lineNumber + 1})`;
}

/** Where a script comes from: the package under node_modules, `node:internal`, or the repo-relative file. */
function where(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (pkg) return `npm:${pkg[1]}`;
  if (path.startsWith('node:')) return path;
  const at = path.indexOf(ROOT);
  return at >= 0 ? path.slice(at + ROOT.length + 1) : path;
}

/** Per-sample durations in µs: a sample lasts until the next one (the last until `endTime`). */
function sampleDurations(profile: CpuProfile): number[] {
  const out: number[] = [];
  let t = profile.startTime;
  const stamps = profile.timeDeltas.map((d) => (t += d));
  for (let i = 0; i < stamps.length; i++)
    out.push((i + 1 < stamps.length ? stamps[i + 1] : profile.endTime) - stamps[i]);
  return out;
}

interface AppSummary {
  app: string;
  wallMs: number;
  busyMs: number;
  idleMs: number;
  gcMs: number;
  topFrames: Array<{ frame: string; ms: number }>;
  topFiles: Array<{ file: string; ms: number }>;
  standIns: Array<{ label: string; ms: number }>;
}

/** Self time per frame and per file, busy (non-idle) time, and the stand-ins' inclusive time, in ms. */
function summarise(app: string, profile: CpuProfile): AppSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  const durations = sampleDurations(profile);
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + durations[i]));

  const frames = new Map<string, number>();
  const files = new Map<string, number>();
  let idle = 0;
  let gc = 0;
  let busy = 0;
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') {
      idle += us;
      continue;
    }
    busy += us;
    if (frame.functionName === '(garbage collector)') gc += us;
    const name = frameName(frame);
    frames.set(name, (frames.get(name) ?? 0) + us);
    const file = frame.url ? where(frame.url) : frame.functionName;
    files.set(file, (files.get(file) ?? 0) + us);
  }
  // A sample counts for a stand-in when any frame on its stack is in the stand-in's file.
  const standIns = STAND_INS.map(({ label, file }) => {
    let us = 0;
    for (const [id, t] of selfUs) {
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        if (byId.get(at)!.callFrame.url.endsWith(file)) {
          us += t;
          break;
        }
      }
    }
    return { label, ms: us / 1000 };
  });
  const top = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, TOP);
  return {
    app,
    wallMs: (profile.endTime - profile.startTime) / 1000,
    busyMs: busy / 1000,
    idleMs: idle / 1000,
    gcMs: gc / 1000,
    topFrames: top(frames).map(([frame, us]) => ({ frame, ms: us / 1000 })),
    topFiles: top(files).map(([file, us]) => ({ file, ms: us / 1000 })),
    standIns,
  };
}

function main(): void {
  const runFile = join(PROFILE_DIR, 'run.json');
  if (!existsSync(runFile))
    throw new Error(
      `${runFile} is missing: record the profiles first (node tools/run-ts.js bench/pipeline/pipeline.bench.ts --profile)`,
    );
  const run = JSON.parse(readFileSync(runFile, 'utf8')) as {
    command: string;
    commit: string;
    date: string;
    asks: number;
    throughput: { asksPerSecond: number };
  };
  const summaries = APPS.map((app) =>
    summarise(app, JSON.parse(readFileSync(join(PROFILE_DIR, `${app}.cpuprofile`), 'utf8')) as CpuProfile),
  );
  const perAsk = (ms: number) => (ms / run.asks).toFixed(2);
  const command = `node tools/run-ts.js bench/pipeline/profile-summary.ts${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(' ')}` : ''}`;
  writeFileSync(
    join(__dirname, 'profile-results.json'),
    `${JSON.stringify({ run, command, machine: machine(), summaries }, null, 2)}\n`,
  );
  const m = machine();
  const parts = summaries.map((s) => {
    const frames = s.topFrames
      .map((f) => `| ${f.frame.replace(/\|/g, '\\|')} | ${perAsk(f.ms)} | ${((f.ms / s.busyMs) * 100).toFixed(1)} |`)
      .join('\n');
    const files = s.topFiles.map((f) => `${f.file} ${perAsk(f.ms)}`).join(', ');
    const standIns = s.standIns
      .filter((x) => x.ms > 0)
      .map((x) => `${x.label} ${perAsk(x.ms)} ms/ask`)
      .join('; ');
    return `### ${s.app}

Sampled CPU ${perAsk(s.busyMs)} ms per ask (${s.busyMs.toFixed(0)} ms busy of ${s.wallMs.toFixed(0)} ms profiled; garbage collector ${perAsk(s.gcMs)} ms/ask).${standIns ? ` Inclusive time of the stand-ins: ${standIns}.` : ''}

| Frame (self time) | ms per ask | % of busy |
|---|---:|---:|
${frames}

By file or package (self ms per ask): ${files}.`;
  });
  writeResultsSection(
    SECTION,
    `${SECTION}

CPU profiles of each app (V8's sampling profiler, the one behind \`node --cpu-prof\`, 500 µs interval) over the pipeline bench's sequential and concurrent phases (${run.asks} asks), recorded by \`${run.command}\` at commit ${run.commit} (${run.date}; ${run.throughput.asksPerSecond} asks/s under the profiler) and summarised by \`${command}\`. Self time per frame ÷ asks; the profiler's own cost makes these figures a little higher than the bench's \`/proc\` CPU. Machine: ${m.nproc} CPUs, ${m.cpuModel}, Node ${m.node}. Raw figures: \`bench/pipeline/profile-results.json\`.

${parts.join('\n\n')}
`,
  );
  console.log('wrote bench/pipeline/profile-results.json and its section of bench/RESULTS.md');
}

main();
