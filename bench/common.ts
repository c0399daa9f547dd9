/**
 * Helpers shared by the benchmarks: command-line numbers, percentiles, the machine's description, the
 * commit, and writing one section of bench/RESULTS.md without touching the others.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join, relative, resolve } from 'node:path';

export const BENCH_ROOT = resolve(__dirname, '..');

/**
 * The folder of the full data sets the benches read: `$ASK_SHARED_DATA`, else `../shared/data` beside
 * the repository (the specs never need it: they read the excerpts in fixtures/data).
 * @throws Error naming the folder, the missing data sets and how to provide them, when any of `needed`
 *   (data set folder names, e.g. `mt-bench-101`) is not there.
 */
export function sharedDataDir(needed: readonly string[]): string {
  const dir = process.env['ASK_SHARED_DATA'] || resolve(BENCH_ROOT, '..', 'shared', 'data');
  const missing = needed.filter((name) => !existsSync(join(dir, name)));
  if (missing.length) {
    throw new Error(
      `this bench reads the full data sets ${needed.join(', ')} from ${dir}; missing: ${missing.join(', ')}. ` +
        'Put the shared data folder beside the repository (../shared/data) or set ASK_SHARED_DATA to it.',
    );
  }
  return dir;
}

/** A path as the benches print it: relative to the repository root (never a machine's absolute path). */
export function repoRelative(path: string): string {
  return relative(BENCH_ROOT, path) || '.';
}

/** `--name N` from the command line; `fallback` when absent. `min` is the smallest value accepted. */
export function numberArg(name: string, fallback: number, min = 1): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const value = Number(process.argv[i + 1]);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} wants an integer ≥ ${min}`);
  return value;
}

/** The nearest-rank percentile `p` (0–100) of an ascending list; NaN for an empty one. */
export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** Cores (`nproc`), memory in GiB, Node version and CPU model of this machine. */
export function machine() {
  const cpuinfo = existsSync('/proc/cpuinfo') ? readFileSync('/proc/cpuinfo', 'utf8') : '';
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown';
  let nproc: number;
  try {
    nproc = Number(execFileSync('nproc', { encoding: 'utf8' }).trim());
  } catch {
    nproc = cpus().length;
  }
  return {
    nproc,
    totalMemoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    cpuModel: model,
  };
}

/**
 * The line that opens a section with where its figures came from: `Command: \`<command>\` (commit
 * <commit>, <YYYY-MM-DD>, <n> cores, Node <version>)<after>.`, from a run's `commit`, ISO `date` and
 * {@link machine}.
 */
export function commandLine(
  command: string,
  run: { commit: string; date: string; machine: { nproc: number; node: string } },
  after = '',
): string {
  return `Command: \`${command}\` (commit ${run.commit}, ${run.date.slice(0, 10)}, ${run.machine.nproc} cores, Node ${run.machine.node})${after}.`;
}

/**
 * The short commit the benchmark ran on, with `-dirty` when tracked files differ from it (a figure
 * measured on uncommitted code names no commit anyone can check out), or `unknown` outside a checkout.
 * Files the benches themselves write (bench/RESULTS.md, bench/<name>/*.json|csv) do not count as dirt:
 * a bench that reruns after another has written its section still ran on the commit.
 */
export function gitCommit(): string {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: BENCH_ROOT, encoding: 'utf8' }).trim();
    const changed = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: BENCH_ROOT,
      encoding: 'utf8',
    })
      .split('\n')
      .map((line) => line.slice(3).trim())
      .filter((path) => path && !BENCH_OUTPUT.test(path));
    return changed.length ? `${commit}-dirty` : commit;
  } catch {
    return 'unknown';
  }
}

/** What the benches write themselves: their RESULTS.md sections and result files beside each bench. */
const BENCH_OUTPUT = /^bench\/(RESULTS\.md|[^/]+\/[^/]+\.(json|csv))$/;

/**
 * Replaces the section headed `heading` (a `## ` line) of bench/RESULTS.md with `markdown`, or appends
 * it; every other section is left as it is.
 */
export function writeResultsSection(heading: string, markdown: string): void {
  const file = join(BENCH_ROOT, 'bench', 'RESULTS.md');
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmark results\n';
  const start = current.indexOf(`${heading}\n`);
  let next: string;
  if (start < 0) {
    next = `${current.replace(/\s*$/, '')}\n\n${markdown.trim()}\n`;
  } else {
    const after = current.slice(start + heading.length);
    const rel = after.search(/\n## /);
    const end = rel < 0 ? current.length : start + heading.length + rel + 1;
    const tail = current.slice(end);
    next = `${current.slice(0, start)}${markdown.trim()}\n${tail ? `\n${tail}` : ''}`;
  }
  writeFileSync(file, next);
}
