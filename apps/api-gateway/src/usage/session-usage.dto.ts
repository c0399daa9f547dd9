import type { UsageGroup, UsageTotals } from '@ask/persistence';

/**
 * The tokens and cost of one ask of a session: the sums of its `provider_calls` rows (the answer, a
 * retry after an overflow, a count endpoint call, the pair's summary). Tokens in the OpenTelemetry
 * GenAI buckets (input includes cache read and write, output includes reasoning); `costUsd` an exact
 * decimal string (USD, 12 places) over the priced calls.
 */
export interface SessionAskUsageDto extends UsageTotals {
  /** The ask's id (the stored message's `askId`); `''` for calls of the session made for no ask. */
  askId: string;
}

/**
 * `GET /api/v1/projects/:projectId/sessions/:sessionId/usage` → 200: the session's calls by ask, in
 * the order of each ask's first call, and the totals over every call of the session (asks that
 * ended in an error included). The dashboard draws its picture of the session from this and the
 * session's stored messages (their `budget`).
 */
export interface SessionUsageDto {
  sessionId: string;
  asks: SessionAskUsageDto[];
  totals: UsageTotals;
}

/** The DTO of a repository summary (`key` is the ask id). */
export function toSessionUsageDto(
  sessionId: string,
  summary: { asks: UsageGroup[]; totals: UsageTotals },
): SessionUsageDto {
  return {
    sessionId,
    asks: summary.asks.map(({ key, ...figures }) => ({ askId: key, ...figures })),
    totals: summary.totals,
  };
}
