/**
 * Redis stream ids (`<ms>-<seq>`, two unsigned 64-bit integers) as the SSE ids of an ask's events:
 * parsing, range checks and ordering, done here so a client's `Last-Event-ID` never reaches Redis
 * unchecked (Redis answers "ERR Invalid stream ID" for a part above 2^64 − 1).
 */

const STREAM_ID = /^(\d{1,20})-(\d{1,20})$/;
const MAX_PART = (1n << 64n) - 1n;

/** True when `id` is `<ms>-<seq>` with both parts in 0 … 2^64 − 1 (what Redis itself accepts). */
export function isValidStreamId(id: string): boolean {
  const match = STREAM_ID.exec(id);
  return !!match && BigInt(match[1]) <= MAX_PART && BigInt(match[2]) <= MAX_PART;
}

/** Compares two stream ids numerically: negative when a < b, 0 when equal. `0` counts as `0-0`. */
export function compareStreamIds(a: string, b: string): number {
  const [am, as = 0n] = a.split('-').map(BigInt);
  const [bm, bs = 0n] = b.split('-').map(BigInt);
  if (am !== bm) return am < bm ? -1 : 1;
  return as === bs ? 0 : as < bs ? -1 : 1;
}
