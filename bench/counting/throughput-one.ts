/**
 * One engine on one text kind in a fresh process, for bench/counting/throughput.bench.ts:
 *
 *   node tools/run-ts.js bench/counting/throughput-one.ts <engine> <kind> <bytes>
 *
 * The kind's messages (corpus order) are split into two disjoint samples of up to `bytes` UTF-8 bytes
 * each, A (the first messages) and B (the next). The engine is built in this process (its build timed),
 * then, one message at a time:
 * - cold: one pass over B, the first text this process counts (JIT, memos and caches all empty);
 * - new text: one pass over A, text the process has not counted, after B (a long-running process meeting
 *   new user text);
 * - warm: three more passes over B, text the engine has just counted (what a bench timing the same
 *   sample again measures: memos answer most of it).
 * Times are this process's CPU (user + system, `process.cpuUsage`) and wall clock, ms.
 * Prints one JSON line ({@link OneRun}).
 */
import { performance } from 'node:perf_hooks';
import { ENGINES, type EngineName, type OneRun, samples, timed } from './throughput-engines';

function main(): void {
  const [engine, kind, bytesArg] = process.argv.slice(2) as [EngineName, string, string];
  if (!(engine in ENGINES)) throw new Error(`unknown engine ${engine}`);
  const { a, b } = samples(process.env['ASK_SHARED_DATA'], kind, Number(bytesArg));
  if (!a.length || !b.length) throw new Error(`too few ${kind} messages for two samples`);
  const cpu = process.cpuUsage();
  const wall = performance.now();
  const count = ENGINES[engine]();
  count('Hello, world.');
  const used = process.cpuUsage(cpu);
  const build = {
    cpuMs: Math.round((used.user + used.system) / 100) / 10,
    wallMs: Math.round((performance.now() - wall) * 10) / 10,
  };
  const cold = timed(b, count);
  const newText = timed(a, count);
  const warm = [0, 1, 2].map(() => timed(b, count));
  const run: OneRun = { engine, kind, build, cold, newText, warm };
  process.stdout.write(`${JSON.stringify(run)}\n`);
}

main();
