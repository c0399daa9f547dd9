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

/**
 * Compares two stream ids numerically: negative when a < b, 0 when equal. `0` counts as `0-0` (a
 * missing sequence part is 0). For ids of the form {@link isValidStreamId} accepts (leading zeros
 * allowed). Compares the digits in place (a part's value orders by its length without leading zeros,
 * then by its digits), with no BigInt and no array per call: the hub and the relay compare ids for
 * every entry they hand over.
 */
export function compareStreamIds(a: string, b: string): number {
  if (a === b) return 0;
  const aDash = a.indexOf('-');
  const bDash = b.indexOf('-');
  const aMsEnd = aDash < 0 ? a.length : aDash;
  const bMsEnd = bDash < 0 ? b.length : bDash;
  const ms = compareDigits(a, 0, aMsEnd, b, 0, bMsEnd);
  if (ms !== 0) return ms;
  return compareDigits(a, aDash < 0 ? a.length : aDash + 1, a.length, b, bDash < 0 ? b.length : bDash + 1, b.length);
}

/** Compares the unsigned decimal numbers `a[aFrom, aTo)` and `b[bFrom, bTo)`; an empty range is 0. */
function compareDigits(a: string, aFrom: number, aTo: number, b: string, bFrom: number, bTo: number): number {
  while (aFrom < aTo && a.charCodeAt(aFrom) === 48) aFrom += 1; // leading zeros (and a lone 0) say nothing
  while (bFrom < bTo && b.charCodeAt(bFrom) === 48) bFrom += 1;
  const length = aTo - aFrom - (bTo - bFrom);
  if (length !== 0) return length < 0 ? -1 : 1;
  for (; aFrom < aTo; aFrom += 1, bFrom += 1) {
    const d = a.charCodeAt(aFrom) - b.charCodeAt(bFrom);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}
