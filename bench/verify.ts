/**
 * `npm run bench:verify`: every bench still produces its section, every section names a commit anyone
 * can check out, and the generated tables equal what their scripts derive.
 *
 *   npm run bench:verify                        # all three checks
 *   npm run bench:verify -- --only memory,packing   # the runs of these benches only (names below;
 *                                                 # `generated` for check 3)
 *   npm run bench:verify -- --static            # the RESULTS.md check alone (no runs)
 *
 * 0. The held-out rule (bench/heldout.ts): no tuning script reaches the script that scores its held-out
 *    set, no fit source is held out too, and every tuned figure's `ruleMet` is true to the facts.
 * 1. RESULTS.md: each `## ` section names a command (`node tools/run-ts.js bench/…`) and at least one
 *    commit (`commit abc1234`, `-dirty` allowed and reported), and every commit it names is an ancestor
 *    of HEAD (`git merge-base --is-ancestor`): a figure whose commit is not in the history cannot be
 *    re-derived.
 * 2. Runs: a throwaway copy of this checkout (`git worktree add --detach` at HEAD, with the working
 *    tree's uncommitted changes applied, so what is verified is what is on disk) runs each bench below
 *    on the small committed inputs (`ASK_SHARED_DATA=fixtures/data`, small counts: seconds each, not the
 *    figures RESULTS.md reports) and must write each of its sections into the copy's RESULTS.md with the
 *    copy's commit. The real RESULTS.md and result files are never touched.
 * 3. Generated files: `derive-common-words.ts` and `derive-rates.ts` derive from the full data sets
 *    (../shared/data or $ASK_SHARED_DATA); run in the copy, the files they write must equal the
 *    committed ones byte for byte. Without the full data sets this check says so and fails, unless
 *    `--skip-generated` is given (the runs above never need them).
 *
 * Exit code 1 with one line per failure; 0 when all hold.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  copyFileSync,
  mkdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { BENCH_ROOT } from './common';
import { checkHeldOutRule } from './heldout';

/** Stands for the copy's fixtures/data folder in a run's arguments. */
const FIXTURES = '{fixtures}';

/** One bench run of the verification: the script, its small arguments and the sections it must write. */
interface BenchRun {
  name: string;
  script: string;
  args: string[];
  sections: string[];
  env?: Record<string, string>;
}

/**
 * The benches and the small inputs each runs on here. `sections` are the `## ` headings each writes.
 * profile-summary reads the CPU profiles of a `--profile` pipeline run: it runs after that run.
 */
export const BENCH_RUNS: readonly BenchRun[] = [
  {
    name: 'planning',
    script: 'bench/planning/planning.bench.ts',
    args: ['--ours-iters', '3', '--lc-iters', '2'],
    sections: ['## Planning vs LangChain trimMessages'],
  },
  {
    name: 'packing',
    script: 'bench/packing/packing.bench.ts',
    args: [],
    sections: ['## Packing against the seed ceiling'],
  },
  {
    name: 'counting',
    script: 'bench/counting/bench.ts',
    args: [],
    sections: ['## Token counting'],
    env: { COUNTING_MAX_MESSAGES: '600' },
  },
  {
    name: 'counting-heldout',
    script: 'bench/counting/heldout.bench.ts',
    args: ['--arena-bytes', '20000'],
    sections: ['## Token counting on a blind held-out source'],
  },
  {
    name: 'counting-throughput',
    script: 'bench/counting/throughput.bench.ts',
    args: ['--bytes', '2000', '--runs', '1', '--kinds', 'english,chinese'],
    sections: ['## Counting throughput, cold and warm'],
  },
  {
    name: 'abstain',
    script: 'bench/abstain/abstain.bench.ts',
    args: ['--data', FIXTURES],
    sections: ['## Abstain threshold of the local stand-in'],
  },
  {
    name: 'answers',
    script: 'bench/answers/answers.bench.ts',
    args: ['--data', FIXTURES],
    sections: ["## The local stand-in's answers to the PostgreSQL session"],
  },
  {
    name: 'retrieval',
    script: 'bench/retrieval/retrieval.bench.ts',
    args: ['--distractors', '2', '--questions', '20', '--pieces', '16', '--data', FIXTURES],
    sections: ['## Retrieval quality on the PostgreSQL manual', '## Semantic ingestion throughput'],
  },
  {
    name: 'heldout',
    script: 'bench/retrieval/heldout.bench.ts',
    // The committed excerpt and its `ask eval` questions stand in for the fetched corpora (tmp/corpora).
    args: [
      '--corpora',
      FIXTURES,
      '--sets',
      'kb-postgresql-15-docs=fixtures/eval/postgresql-15-questions.jsonl',
      '--semantic-distractors',
      '0',
    ],
    sections: ['## Retrieval on held-out corpora'],
  },
  {
    name: 'scale',
    script: 'bench/retrieval/scale.bench.ts',
    // One project just above the exact-scan cutoff (10,000 rows), so the HNSW path runs too.
    args: [
      '--projects',
      '2',
      '--chunks',
      '40',
      '--queries',
      '10',
      '--large',
      '1',
      '--large-chunks',
      '10001',
      '--large-queries',
      '5',
      '--data',
      FIXTURES,
    ],
    sections: ['## Vector search at 100K chunks'],
  },
  {
    name: 'memory',
    script: 'bench/memory/memory.bench.ts',
    args: ['--sessions', '1'],
    sections: ['## Conversation memory: fact retention'],
  },
  {
    name: 'memory-kb',
    script: 'bench/memory/memory.bench.ts',
    args: ['--kb', '--sessions', '1'],
    sections: ['## Conversation memory with a knowledge base'],
  },
  {
    name: 'memory-kb-long',
    script: 'bench/memory/memory.bench.ts',
    args: ['--kb', '--sessions', '1', '--turns', '120'],
    sections: ['## Conversation memory with a knowledge base, 120 turns'],
  },
  {
    name: 'memory-kb-zh',
    script: 'bench/memory/memory.bench.ts',
    args: ['--kb', '--zh-sessions', '1'],
    sections: ['## Conversation memory with a knowledge base, Chinese'],
  },
  {
    name: 'relevance',
    script: 'bench/relevance/relevance.bench.ts',
    args: ['--distractors', '2', '--data', FIXTURES],
    sections: ['## Relevance floor per embedder and retrieval method'],
  },
  {
    name: 'fairness',
    script: 'bench/fairness/fairness.bench.ts',
    args: ['--flood', '10', '--sessions', '2', '--slow', '2', '--slow-s', '1'],
    sections: ['## Fairness between tenants'],
  },
  {
    name: 'hostile',
    script: 'bench/hostile/hostile.bench.ts',
    args: ['--clients', '40', '--ramp-per-s', '40', '--opening', '5'],
    sections: ['## Hostile inputs (bounded cost, issue 10)'],
  },
  {
    name: 'load',
    script: 'bench/load/load.bench.ts',
    args: ['--sessions', '4', '--seconds', '4'],
    sections: ['## Load run (200 sessions, 60 s)'],
  },
  {
    name: 'pipeline',
    script: 'bench/pipeline/pipeline.bench.ts',
    args: ['--warmup-asks', '4', '--latency-asks', '4', '--sessions', '2', '--asks-per-session', '3'],
    sections: ['## Pipeline (local providers)'],
  },
  {
    name: 'coalescing',
    script: 'bench/pipeline/coalescing.bench.ts',
    args: ['--asks', '2'],
    sections: ['## Delta coalescing (1,000-token streamed answer)'],
  },
  {
    name: 'per-call',
    script: 'bench/pipeline/per-call.bench.ts',
    args: ['--calls', '40'],
    sections: ['## Per-call client CPU (pipeline)'],
  },
  {
    name: 'heldout-rule',
    script: 'bench/heldout.ts',
    args: [],
    sections: ['## Tuned figures and their held-out sets'],
  },
  {
    name: 'synthesis-calls',
    script: 'bench/pipeline/synthesis-calls.bench.ts',
    args: ['--asks', '4', '--warmup-asks', '2'],
    sections: [],
  },
];

/** The files `derive-*.ts` write, relative to the repository root. */
const GENERATED = [
  { script: 'bench/counting/derive-common-words.ts', file: 'libs/token-counting/src/common-words.ts' },
  { script: 'bench/counting/derive-rates.ts', file: 'libs/token-counting/src/script-rates.ts' },
];

const COMMIT = /\bcommit [`]?([0-9a-f]{7,40})(-dirty)?\b/g;
const COMMAND = /node tools\/run-ts\.js bench\//;

/** The `## ` sections of a RESULTS.md text: heading and body. */
export function resultSections(text: string): Array<{ heading: string; body: string }> {
  const parts = text.split(/^(?=## )/m).filter((p) => p.startsWith('## '));
  return parts.map((p) => {
    const nl = p.indexOf('\n');
    return { heading: p.slice(0, nl < 0 ? p.length : nl).trim(), body: nl < 0 ? '' : p.slice(nl + 1) };
  });
}

function git(args: string[], cwd = BENCH_ROOT): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function isAncestor(commit: string, cwd = BENCH_ROOT): boolean {
  return spawnSync('git', ['merge-base', '--is-ancestor', commit, 'HEAD'], { cwd }).status === 0;
}

/**
 * Check 1 over a RESULTS.md text: the failures, one line each (section heading and what is wrong): a
 * section that names no command or no commit, a commit not in HEAD's history, or a machine's absolute path.
 * `isAncestorOf` answers whether a commit is in HEAD's history (git in the checkout by default).
 */
export function checkSections(text: string, isAncestorOf: (commit: string) => boolean = isAncestor): string[] {
  const failures: string[] = [];
  for (const { heading, body } of resultSections(text)) {
    const commits = [...body.matchAll(COMMIT)].map((m) => m[1]);
    if (!COMMAND.test(body)) failures.push(`${heading}: names no command (node tools/run-ts.js bench/…)`);
    if (commits.length === 0) failures.push(`${heading}: names no commit`);
    for (const commit of new Set(commits)) {
      if (!isAncestorOf(commit)) failures.push(`${heading}: commit ${commit} is not an ancestor of HEAD`);
    }
    const path = MACHINE_PATH.exec(body);
    if (path) failures.push(`${heading}: names a machine's absolute path (${path[0]}): name it relative to the repo`);
  }
  return failures;
}

/** An absolute path of some machine (a home, a workspace, a temporary folder), which no reader can re-run. */
const MACHINE_PATH = /(?<![\w.])\/(?:work|home|Users|root|tmp|var\/folders|mnt)\/[^\s`'")]+/;

/** A copy of the checkout at HEAD plus the working tree's changes; node_modules linked, not copied. */
function makeCopy(): { root: string; remove: () => void } {
  const parent = mkdtempSync(join(tmpdir(), 'ask-bench-verify-'));
  const root = join(parent, 'ask');
  git(['worktree', 'add', '--detach', '--quiet', root, 'HEAD']);
  const remove = () => {
    spawnSync('git', ['worktree', 'remove', '--force', root], { cwd: BENCH_ROOT });
    rmSync(parent, { recursive: true, force: true });
  };
  try {
    const diff = execFileSync('git', ['diff', '--binary', 'HEAD'], { cwd: BENCH_ROOT, maxBuffer: 1 << 28 });
    if (diff.length) execFileSync('git', ['apply', '--whitespace=nowarn', '-'], { cwd: root, input: diff });
    for (const file of git(['ls-files', '--others', '--exclude-standard']).split('\n').filter(Boolean)) {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      copyFileSync(join(BENCH_ROOT, file), join(root, file));
    }
    symlinkSync(join(BENCH_ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  } catch (err) {
    remove();
    throw err;
  }
  return { root, remove };
}

function runIn(root: string, script: string, args: string[], env: Record<string, string>, timeoutMs: number) {
  return spawnSync(process.execPath, [join(root, 'tools', 'run-ts.js'), script, ...args], {
    cwd: root,
    env: { ...process.env, ...env, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
    timeout: timeoutMs,
    maxBuffer: 1 << 26,
  });
}

function main(): void {
  const argv = process.argv.slice(2);
  const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1].split(',') : undefined;
  const failures: string[] = [];

  const results = readFileSync(join(BENCH_ROOT, 'bench', 'RESULTS.md'), 'utf8');
  const sectionFailures = checkSections(results);
  failures.push(...sectionFailures.map((f) => `RESULTS.md ${f}`));
  console.log(
    `bench:verify: RESULTS.md, ${resultSections(results).length} sections, ${sectionFailures.length} failing`,
  );
  const rule = checkHeldOutRule();
  failures.push(...rule.failures.map((f) => `held-out rule: ${f}`));
  console.log(
    `bench:verify: held-out rule, ${rule.failures.length} failing, ${rule.pending.length} figures not meeting it yet (listed in "Tuned figures and their held-out sets")`,
  );
  if (argv.includes('--static')) return finish(failures);

  const copy = makeCopy();
  try {
    const commit = git(['rev-parse', '--short', 'HEAD'], copy.root);
    const fixtures = join(copy.root, 'fixtures', 'data');
    // Each bench starts from an empty RESULTS.md in the copy, so a section found there was written now.
    const copyResults = join(copy.root, 'bench', 'RESULTS.md');
    for (const run of BENCH_RUNS.filter((r) => !only || only.includes(r.name))) {
      writeFileSync(copyResults, '# Benchmark results\n');
      const started = Date.now();
      const args = run.args.map((a) => (a === FIXTURES ? fixtures : a));
      const out = runIn(copy.root, run.script, args, { ASK_SHARED_DATA: fixtures, ...run.env }, 1_200_000);
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      if (out.status !== 0) {
        const output = `${out.stderr ?? ''}${out.stdout ?? ''}`.trim().split('\n');
        // The thrown error's own line first (a stack's last lines name only the loader), then the tail.
        const error = output.find((line) => /^\s*(\w*Error|Uncaught)\b/.test(line));
        const tail = [...(error ? [error.trim(), '…'] : []), ...output.slice(-6)].join(' | ');
        failures.push(`${run.name}: ${run.script} exited ${out.status ?? out.signal} after ${seconds} s: ${tail}`);
        console.log(`bench:verify: ${run.name} FAILED (${seconds} s)`);
        continue;
      }
      const written = resultSections(readFileSync(copyResults, 'utf8'));
      const missing = run.sections.filter((h) => {
        const section = written.find((s) => s.heading === h);
        return !section || !new RegExp(`\\bcommit [\`]?${commit}`).test(section.body);
      });
      for (const h of missing) failures.push(`${run.name}: did not write "${h}" naming commit ${commit}`);
      console.log(`bench:verify: ${run.name} ${missing.length ? 'FAILED' : 'ok'} (${seconds} s)`);
    }
    if ((!only || only.includes('generated')) && !argv.includes('--skip-generated'))
      failures.push(...checkGenerated(copy.root));
  } finally {
    copy.remove();
  }
  finish(failures);
}

/** Check 3: each generated file, derived again in the copy from the full data sets, equals the committed one. */
function checkGenerated(root: string): string[] {
  const data = process.env['ASK_SHARED_DATA'] || resolve(BENCH_ROOT, '..', 'shared', 'data');
  if (!existsSync(data)) {
    return [`generated files: the full data sets are missing (${data}); give --skip-generated to skip this check`];
  }
  const failures: string[] = [];
  for (const { script, file } of GENERATED) {
    const out = runIn(root, script, [], { ASK_SHARED_DATA: data }, 1_800_000);
    if (out.status !== 0) {
      failures.push(`generated ${file}: ${script} exited ${out.status ?? out.signal}`);
      continue;
    }
    // The committed tables are formatted by prettier (the repository's format check); so is the derived one.
    spawnSync(join(root, 'node_modules', '.bin', 'prettier'), ['--write', file], { cwd: root });
    const committed = readFileSync(join(BENCH_ROOT, file), 'utf8');
    const derived = readFileSync(join(root, file), 'utf8');
    const same = stripDate(committed) === stripDate(derived);
    if (!same) failures.push(`generated ${file} differs from what ${script} derives (re-run the script and commit)`);
    console.log(`bench:verify: ${file} ${same ? 'equals' : 'DIFFERS from'} what ${script} derives`);
  }
  return failures;
}

/** The generated header's date is when the script ran, not what it derived. */
function stripDate(text: string): string {
  return text.replace(/ on \d{4}-\d{2}-\d{2}/, '');
}

function finish(failures: string[]): void {
  for (const f of failures) console.error(`bench:verify: ${f}`);
  console.log(`bench:verify: ${failures.length ? `${failures.length} failing` : 'all hold'}`);
  if (failures.length) process.exitCode = 1;
}

main();
