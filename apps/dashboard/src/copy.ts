import { AskErrorCode, DASHBOARD_COPY, isAskErrorCode } from '@ask/ask-errors';
import type { BudgetEvent, ErrorEvent } from '@ask/ask-contracts';

/**
 * The dashboard copy of a typed error, chosen by its `code` (never by the `error` text, which may be
 * reworded): seed 000's "Dashboard surfaces" column, imported from @ask/ask-errors. An unknown code
 * gets the catch-all copy.
 */
export function errorCopy(error: Pick<ErrorEvent, 'code'>): string {
  if (error.code === STREAM_LOST_CODE) return STREAM_LOST_COPY;
  return isAskErrorCode(error.code) ? DASHBOARD_COPY[error.code] : DASHBOARD_COPY[AskErrorCode.InternalError];
}

/** The page's own code for a stream the browser gave up on (not one of the API's codes). */
export const STREAM_LOST_CODE = 'stream_lost';

/** Shown when the browser gave up on the events stream before `done` or `error` arrived. */
export const STREAM_LOST_COPY = 'The connection to the answer was lost. Try again in a moment.';

const number = new Intl.NumberFormat('en-US');

/** Tokens with thousands separators: 8192 → "8,192". */
export function tokens(value: number): string {
  return number.format(value);
}

/** The badge: "used / window" tokens of the turn's prompt (seed 001: context in use vs. model limit). */
export function badgeText(budget: BudgetEvent): string {
  return `${tokens(budget.used)} / ${tokens(budget.window)}`;
}

/**
 * An exact USD decimal string (the API's `costUsd`, 12 places) for reading: rounded half up to 6
 * places, trailing zeros dropped but 2 kept: "0.002161250000" → "$0.002161", "1.500000000000" →
 * "$1.50", "0.000000000000" → "$0.00". Integer arithmetic only (no float rounding).
 */
export function usd(value: string): string {
  const [whole, fraction = ''] = value.split('.');
  const pico = BigInt(whole || '0') * 10n ** 12n + BigInt((fraction + '0'.repeat(12)).slice(0, 12));
  const micro = (pico + 500_000n) / 1_000_000n;
  const units = micro / 1_000_000n;
  const decimals = (micro % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '').padEnd(2, '0');
  return `$${number.format(units)}.${decimals}`;
}

function plural(count: number, one: string, many: string): string {
  return `${tokens(count)} ${count === 1 ? one : many}`;
}

/**
 * What the budget did to this turn's prompt, in plain words: what was carried, and what was dropped
 * to fit the window (null when nothing was dropped).
 */
export function budgetSummary(budget: BudgetEvent): { kept: string; dropped: string | null } {
  const kept =
    `Prompt ${tokens(budget.used)} of ${tokens(budget.window)} tokens (${budget.model}); carried ` +
    `${plural(budget.turnsKept, 'earlier turn', 'earlier turns')} and ${plural(budget.contextKept, 'context item', 'context items')}.`;
  const parts: string[] = [];
  if (budget.turnsDropped > 0) parts.push(plural(budget.turnsDropped, 'earlier turn', 'earlier turns'));
  if (budget.contextDropped > 0) parts.push(plural(budget.contextDropped, 'context item', 'context items'));
  const dropped = parts.length ? `Dropped to fit the context window: ${parts.join(' and ')}.` : null;
  return { kept, dropped };
}

/** Ranges of 1-based turns in words: [[1, 12], [14, 14]] → "1–12, 14". */
export function turnRanges(ranges: ReadonlyArray<[number, number]>): string {
  return ranges.map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`)).join(', ');
}

/**
 * The memory line of a turn: which earlier turns rode verbatim, as summaries, under the
 * session summary (where compaction happened) or not at all, e.g. "Memory: turns 1–12 summarised,
 * 13–18 verbatim." Null when the turn had no earlier turns, or the event predates memory.
 */
export function memoryLine(budget: BudgetEvent): string | null {
  const m = budget.memory;
  if (!m || m.verbatimPairs + m.summarisedPairs + m.compactedPairs + m.droppedPairs === 0) return null;
  const parts: Array<{ first: number; text: string }> = [];
  const add = (ranges: ReadonlyArray<[number, number]>, what: string) => {
    if (ranges.length) parts.push({ first: ranges[0][0], text: `${turnRanges(ranges)} ${what}` });
  };
  add(m.compacted, `compacted into the session summary (${tokens(m.sessionSummaryTokens)} tokens)`);
  add(m.dropped, 'dropped');
  add(m.summarised, 'summarised');
  add(m.verbatim, 'verbatim');
  const text = parts
    .sort((a, b) => a.first - b.first)
    .map((p) => p.text)
    .join(', ');
  const word = m.verbatimPairs + m.summarisedPairs + m.compactedPairs + m.droppedPairs === 1 ? 'turn' : 'turns';
  return `Memory${m.mode === 'off' ? ' (off)' : ''}: ${word} ${text}.`;
}

/**
 * The relevance line of a turn (so a reader sees why a retrieved item is missing): the retrieved items left out because they scored below
 * the relevance floor, e.g. "Left out for relevance: 8 context items below the floor 0.175 (best
 * 0.14)." and how many below it still rode in room memory could not use. Null when none was below
 * the floor, or the event predates per-item decisions.
 */
export function relevanceLine(budget: BudgetEvent): string | null {
  const items = budget.items;
  if (!items || budget.relevanceFloor === null || budget.relevanceFloor === undefined) return null;
  const out = items.filter((i) => i.reason === 'below-floor' || i.reason === 'excluded');
  const spare = items.filter((i) => i.reason === 'spare-room').length;
  if (out.length === 0 && spare === 0) return null;
  const floor = String(Number(budget.relevanceFloor.toFixed(3)));
  const parts: string[] = [];
  if (out.length) {
    const best = Math.max(...out.map((i) => i.score)).toFixed(2);
    parts.push(
      `Left out for relevance: ${plural(out.length, 'context item', 'context items')} below the floor ${floor} (best ${best}).`,
    );
  }
  if (spare)
    parts.push(
      `${plural(spare, 'context item', 'context items')} below the floor ${floor} sent in room memory did not need.`,
    );
  return parts.join(' ');
}
