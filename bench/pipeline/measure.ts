/**
 * What the pipeline bench reads around each phase: CPU time of each app process (`/proc/<pid>/stat`),
 * Redis commands (`INFO commandstats` of the bench's own Redis server), and the stage times of each ask
 * from the stream ids of its events (a stream id is Redis's clock in ms when the event was written).
 */
import { readFileSync } from 'node:fs';
import type Redis from 'ioredis';
import type { AskEvent } from '@ask/ask-contracts';

/** Clock ticks per second of `/proc/<pid>/stat` (`getconf CLK_TCK`, 100 on Linux x86-64 and arm64). */
const CLK_TCK = 100;

/**
 * User + system CPU time of process `pid` so far, in ms, from `/proc/<pid>/stat` (fields 14 and 15,
 * in clock ticks of 10 ms). Children are not included.
 * @throws Error when the process is gone or /proc is not there.
 */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may contain spaces: split after its ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime is field 14, stime field 15.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

/** Calls per Redis command since the server started (`INFO commandstats`), lower-case names. */
export async function commandCalls(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info('commandstats');
  const calls: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[match[1]] = Number(match[2]);
  return calls;
}

/** `after − before` per command, without the commands that did not change. */
export function callsBetween(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, n] of Object.entries(after)) {
    const delta = n - (before[name] ?? 0);
    if (delta > 0) out[name] = delta;
  }
  return out;
}

/** The stages of one ask, in ms, from its POST (client clock) and its events' stream ids (Redis clock, same host). */
export interface StageTimes {
  postToAccepted: number;
  acceptedToRetrieved: number;
  retrievedToBudget: number;
  budgetToFirstDelta: number;
  firstDeltaToDone: number;
  postToBudget: number;
}

export const STAGES: ReadonlyArray<{ key: keyof StageTimes; label: string }> = [
  { key: 'postToAccepted', label: 'POST → `accepted` written' },
  { key: 'acceptedToRetrieved', label: '`accepted` → `retrieved` (embed, search, enqueue)' },
  { key: 'retrievedToBudget', label: '`retrieved` → `budget` (queue hop, counting, plan)' },
  { key: 'budgetToFirstDelta', label: '`budget` → first `delta`' },
  { key: 'firstDeltaToDone', label: 'first `delta` → `done` (deltas, store)' },
  { key: 'postToBudget', label: 'POST → `budget` (before the provider is called)' },
];

/** The ms part of a stream id (`1718000000000-3` → 1718000000000). */
function idMs(id: string): number {
  return Number(id.slice(0, id.indexOf('-')));
}

/**
 * Stage times of one finished ask from its events (the ids the SSE stream carried) and `postAtMs`,
 * the client's `Date.now()` just before the POST. Undefined when an event is missing (an error).
 */
export function stageTimes(postAtMs: number, events: readonly AskEvent[]): StageTimes | undefined {
  const first = (type: string) => events.find((e) => e.type === type);
  const accepted = first('accepted');
  const retrieved = first('retrieved');
  const budget = first('budget');
  const delta = first('delta');
  const done = first('done');
  if (!accepted || !retrieved || !budget || !delta || !done) return undefined;
  return {
    postToAccepted: idMs(accepted.id) - postAtMs,
    acceptedToRetrieved: idMs(retrieved.id) - idMs(accepted.id),
    retrievedToBudget: idMs(budget.id) - idMs(retrieved.id),
    budgetToFirstDelta: idMs(delta.id) - idMs(budget.id),
    firstDeltaToDone: idMs(done.id) - idMs(delta.id),
    postToBudget: idMs(budget.id) - postAtMs,
  };
}

/** The median of `values` (the mean of the two middle ones for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
