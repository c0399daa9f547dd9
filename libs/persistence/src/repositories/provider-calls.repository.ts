import type { UsageTotals } from '@ask/ask-contracts';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { pgQuery } from '../pg-query';
import { withTransientRetry } from '../transient';

/** What a call was for: the answer, its one re-plan after an overflow, a count endpoint, an embedding. */
export type ProviderCallPurpose = 'answer' | 'overflow_retry' | 'count' | 'embed' | 'summary';

/** One upstream call as it is recorded (`provider_calls`). Token figures are tokens, times milliseconds. */
export interface ProviderCallRecord {
  projectId: string;
  sessionId?: string | null;
  askId?: string | null;
  operation: 'chat' | 'count_tokens' | 'embeddings';
  purpose: ProviderCallPurpose;
  provider: string;
  requestedModel: string;
  /** The model the provider says answered, when it says. */
  answeringModel?: string | null;
  /** The provider's usage object exactly as it arrived (no answer text). */
  rawUsage?: unknown;
  /** Why `rawUsage` could not be normalised (`InconsistentUsageError`'s message); buckets are then null. */
  usageError?: string | null;
  /** Normalised buckets (OpenTelemetry: input includes cache read/write, output includes reasoning). */
  inputTokens?: number | null;
  cacheReadTokens?: number | null;
  cacheWriteTokens?: number | null;
  outputTokens?: number | null;
  reasoningTokens?: number | null;
  /** Our planned prompt count for the call (the budget's `used`). */
  plannedTokens?: number | null;
  timeToFirstChunkMs?: number | null;
  durationMs: number;
  finishReason?: string | null;
  /** The typed error code (`AskErrorCode`) the call ended with, or null for a call that answered. */
  errorCode?: string | null;
  /** Exact USD cost as a decimal string (12 places), or null when the model has no price or no usage. */
  costUsd?: string | null;
  /** The price row that costed the call (`PRICE_TABLE` family or `override:<pattern>`). */
  priceFamily?: string | null;
  startedAt: Date;
}

/**
 * The `finish_reason` of a call's row from just before the request is sent until the call ends
 * ({@link ProviderCallsRepository.open}). A row that keeps it is a call whose process died during
 * it (a SIGKILLed worker): paid, its usage unknown (null tokens, no cost: an unpriced call).
 */
export const CALL_IN_FLIGHT = 'in_flight';

/** What is known of a call before its request is sent. */
export type ProviderCallStart = Pick<
  ProviderCallRecord,
  | 'projectId'
  | 'sessionId'
  | 'askId'
  | 'operation'
  | 'purpose'
  | 'provider'
  | 'requestedModel'
  | 'plannedTokens'
  | 'startedAt'
>;

/** Where the ledgers write (the repository, or a no-op where nothing is recorded). */
export type CallRecorder = Pick<ProviderCallsRepository, 'open' | 'close' | 'record'>;

/** A recorder that records nothing (specs and tools without a database). */
export const NO_CALL_RECORDS: CallRecorder = {
  open: async () => '',
  close: async () => undefined,
  record: async () => undefined,
};

/** A stored call, as read back. */
export interface StoredProviderCall extends Required<Omit<ProviderCallRecord, 'rawUsage'>> {
  id: string;
  rawUsage: unknown;
}

/** How usage is grouped: by UTC day, by provider and requested model, or by session. */
export type UsageGroupBy = 'day' | 'model' | 'session';

export type { UsageTotals } from '@ask/ask-contracts';

/** One group of a usage summary: `key` is `YYYY-MM-DD`, `provider/model` or the session id. */
export interface UsageGroup extends UsageTotals {
  key: string;
}

const SUMS = `count(*)::int AS calls,
  coalesce(sum(input_tokens), 0)::bigint AS input_tokens,
  coalesce(sum(cache_read_tokens), 0)::bigint AS cache_read_tokens,
  coalesce(sum(cache_write_tokens), 0)::bigint AS cache_write_tokens,
  coalesce(sum(output_tokens), 0)::bigint AS output_tokens,
  coalesce(sum(reasoning_tokens), 0)::bigint AS reasoning_tokens,
  coalesce(sum(cost_usd), 0)::numeric(24, 12)::text AS cost_usd,
  count(*) FILTER (WHERE cost_usd IS NULL)::int AS unpriced_calls`;

const GROUP_KEYS: Record<UsageGroupBy, string> = {
  day: `to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')`,
  model: `provider || '/' || requested_model`,
  session: `coalesce(session_id::text, '')`,
};

interface SumRow {
  calls: number;
  input_tokens: string;
  cache_read_tokens: string;
  cache_write_tokens: string;
  output_tokens: string;
  reasoning_tokens: string;
  cost_usd: string;
  unpriced_calls: number;
}

function totalsOf(r: SumRow): UsageTotals {
  return {
    calls: r.calls,
    inputTokens: Number(r.input_tokens),
    cacheReadTokens: Number(r.cache_read_tokens),
    cacheWriteTokens: Number(r.cache_write_tokens),
    outputTokens: Number(r.output_tokens),
    reasoningTokens: Number(r.reasoning_tokens),
    costUsd: r.cost_usd,
    unpricedCalls: r.unpriced_calls,
  };
}

/** The ledger of upstream calls: one row per call, summed for the usage API. */
@Injectable()
export class ProviderCallsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Writes a call's row before its request is sent (`finish_reason` {@link CALL_IN_FLIGHT},
   * `duration_ms` 0), so that a paid call is in the ledger even when its process dies during it; the
   * ledger completes it with {@link close}. Retried while the pool is saturated or the server away
   * (`withTransientRetry`, about 3 s). Named statement.
   * @returns the row's id.
   * @throws the last error when it could not be written: the caller must not make the call.
   */
  async open(call: ProviderCallStart): Promise<string> {
    const rows = await withTransientRetry(() =>
      pgQuery<{ id: string }>(
        this.dataSource,
        `INSERT INTO provider_calls (project_id, session_id, ask_id, operation, purpose, provider, requested_model,
           planned_tokens, duration_ms, finish_reason, started_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9, $10) RETURNING id`,
        [
          call.projectId,
          call.sessionId ?? null,
          call.askId ?? null,
          call.operation,
          call.purpose,
          call.provider,
          call.requestedModel,
          call.plannedTokens ?? null,
          CALL_IN_FLIGHT,
          call.startedAt,
        ],
        'ask_open_provider_call',
      ),
    );
    return String(rows[0].id);
  }

  /**
   * Completes the row {@link open} wrote with how the call ended (every column of `call`; its scope
   * columns are rewritten with the same values). Retried like {@link open}; a row it could not
   * complete stays {@link CALL_IN_FLIGHT}: the call is still counted, its usage unknown.
   * @throws the last error when it could not be written.
   */
  async close(id: string, call: ProviderCallRecord): Promise<void> {
    await withTransientRetry(() =>
      pgQuery(
        this.dataSource,
        `UPDATE provider_calls SET answering_model = $2, raw_usage = $3, usage_error = $4, input_tokens = $5,
           cache_read_tokens = $6, cache_write_tokens = $7, output_tokens = $8, reasoning_tokens = $9,
           planned_tokens = $10, time_to_first_chunk_ms = $11, duration_ms = $12, finish_reason = $13,
           error_code = $14, cost_usd = $15, price_family = $16, started_at = $17
         WHERE id = $1`,
        [
          id,
          call.answeringModel ?? null,
          call.rawUsage === undefined ? null : JSON.stringify(call.rawUsage),
          call.usageError ?? null,
          call.inputTokens ?? null,
          call.cacheReadTokens ?? null,
          call.cacheWriteTokens ?? null,
          call.outputTokens ?? null,
          call.reasoningTokens ?? null,
          call.plannedTokens ?? null,
          call.timeToFirstChunkMs ?? null,
          Math.max(0, Math.round(call.durationMs)),
          call.finishReason ?? null,
          call.errorCode ?? null,
          call.costUsd ?? null,
          call.priceFamily ?? null,
          call.startedAt,
        ],
        'ask_close_provider_call',
      ),
    );
  }

  /**
   * Stores one call (a named statement: every upstream call of every ask writes one).
   * @throws QueryFailedError for a negative figure, a cache larger than the input, reasoning larger
   *   than the output, or an unknown operation/purpose (the table's checks); the last transient error
   *   after retrying like {@link open}.
   */
  async record(call: ProviderCallRecord): Promise<void> {
    await withTransientRetry(() =>
      pgQuery(
        this.dataSource,
        `INSERT INTO provider_calls (project_id, session_id, ask_id, operation, purpose, provider, requested_model, answering_model,
         raw_usage, usage_error, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, reasoning_tokens,
         planned_tokens, time_to_first_chunk_ms, duration_ms, finish_reason, error_code, cost_usd, price_family, started_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)`,
        [
          call.projectId,
          call.sessionId ?? null,
          call.askId ?? null,
          call.operation,
          call.purpose,
          call.provider,
          call.requestedModel,
          call.answeringModel ?? null,
          call.rawUsage === undefined ? null : JSON.stringify(call.rawUsage),
          call.usageError ?? null,
          call.inputTokens ?? null,
          call.cacheReadTokens ?? null,
          call.cacheWriteTokens ?? null,
          call.outputTokens ?? null,
          call.reasoningTokens ?? null,
          call.plannedTokens ?? null,
          call.timeToFirstChunkMs ?? null,
          Math.max(0, Math.round(call.durationMs)),
          call.finishReason ?? null,
          call.errorCode ?? null,
          call.costUsd ?? null,
          call.priceFamily ?? null,
          call.startedAt,
        ],
        'ask_record_provider_call',
      ),
    );
  }

  /** The calls of one ask, oldest first. */
  async forAsk(askId: string): Promise<StoredProviderCall[]> {
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT * FROM provider_calls WHERE ask_id = $1 ORDER BY started_at, id`,
      [askId],
    );
    return rows.map((r) => ({
      id: String(r['id']),
      projectId: r['project_id'] as string,
      sessionId: r['session_id'] as string | null,
      askId: r['ask_id'] as string | null,
      operation: r['operation'] as StoredProviderCall['operation'],
      purpose: r['purpose'] as ProviderCallPurpose,
      provider: r['provider'] as string,
      requestedModel: r['requested_model'] as string,
      answeringModel: r['answering_model'] as string | null,
      rawUsage: r['raw_usage'],
      usageError: r['usage_error'] as string | null,
      inputTokens: r['input_tokens'] as number | null,
      cacheReadTokens: r['cache_read_tokens'] as number | null,
      cacheWriteTokens: r['cache_write_tokens'] as number | null,
      outputTokens: r['output_tokens'] as number | null,
      reasoningTokens: r['reasoning_tokens'] as number | null,
      plannedTokens: r['planned_tokens'] as number | null,
      timeToFirstChunkMs: r['time_to_first_chunk_ms'] as number | null,
      durationMs: r['duration_ms'] as number,
      finishReason: r['finish_reason'] as string | null,
      errorCode: r['error_code'] as string | null,
      costUsd: r['cost_usd'] as string | null,
      priceFamily: r['price_family'] as string | null,
      startedAt: r['started_at'] as Date,
    }));
  }

  /**
   * A project's usage between `from` (inclusive) and `to` (exclusive), by `started_at`, grouped by
   * `groupBy`, plus the totals over the same rows. Sums are SQL sums of the stored rows (costs in
   * exact numeric), so a group's figures are exactly its rows' figures. Groups are ordered by key.
   */
  async summarise(
    projectId: string,
    range: { from: Date; to: Date },
    groupBy: UsageGroupBy,
  ): Promise<{ groups: UsageGroup[]; totals: UsageTotals }> {
    const where = `project_id = $1 AND started_at >= $2 AND started_at < $3`;
    const params = [projectId, range.from, range.to];
    const key = GROUP_KEYS[groupBy];
    const groups: Array<SumRow & { key: string }> = await this.dataSource.query(
      `SELECT ${key} AS key, ${SUMS} FROM provider_calls WHERE ${where} GROUP BY 1 ORDER BY 1`,
      params,
    );
    const [totals]: SumRow[] = await this.dataSource.query(`SELECT ${SUMS} FROM provider_calls WHERE ${where}`, params);
    return { groups: groups.map((g) => ({ key: g.key, ...totalsOf(g) })), totals: totalsOf(totals) };
  }

  /**
   * One session's usage (the dashboard's picture of a session): its calls grouped
   * by ask (`key` the ask id, `''` for calls of no ask), ordered by each ask's first call, plus the
   * totals over every call of the session, whenever it was made. Sums are SQL sums of the stored rows
   * (costs in exact numeric), as in {@link summarise}. A deleted session's calls stay in the ledger.
   */
  async summariseSession(projectId: string, sessionId: string): Promise<{ asks: UsageGroup[]; totals: UsageTotals }> {
    const where = `project_id = $1 AND session_id = $2`;
    const params = [projectId, sessionId];
    const asks: Array<SumRow & { key: string }> = await this.dataSource.query(
      `SELECT coalesce(ask_id::text, '') AS key, ${SUMS} FROM provider_calls WHERE ${where}
        GROUP BY 1 ORDER BY min(started_at), min(id)`,
      params,
    );
    const [totals]: SumRow[] = await this.dataSource.query(`SELECT ${SUMS} FROM provider_calls WHERE ${where}`, params);
    return { asks: asks.map((g) => ({ key: g.key, ...totalsOf(g) })), totals: totalsOf(totals) };
  }
}
