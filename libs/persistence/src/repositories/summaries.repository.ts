import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isUuid } from '../ids';
import { pgQuery } from '../pg-query';

/** Token counts of one summary text per counter id (`{ [counterId]: tokens }`; script-class masks under their own id). */
export type SummaryTokenCounts = Record<string, number>;

/** The stored summary of one question/answer pair. */
export interface TurnSummary {
  messageId: string;
  sessionId: string;
  text: string;
  tokenCounts: SummaryTokenCounts;
  provider: string;
  model: string;
  createdAt: Date;
}

/** The stored summary of a session, covering every pair up to `coversUpTo`. */
export interface SessionSummaryRow {
  sessionId: string;
  text: string;
  /** Id of the newest message (pair) it covers. */
  coversUpTo: string;
  /** How many pairs it covers (the session's first `coversTurns` pairs). */
  coversTurns: number;
  tokenCounts: SummaryTokenCounts;
  provider: string;
  model: string;
  /** Rolling updates since it was last rebuilt from the original messages. */
  rollingUpdates: number;
  updatedAt: Date;
}

/** How a summariser call ended (`summary_calls.outcome`). */
export type SummaryCallOutcome = 'stored' | 'failed' | 'timeout' | 'empty' | 'overflow' | 'gone';

/** One summariser call's usage row: tokens as the provider reported them (null when it did not). */
export interface SummaryCall {
  projectId: string;
  sessionId: string;
  messageId: string | null;
  kind: 'turn' | 'session';
  provider: string;
  model: string;
  promptTokens: number | null;
  completionTokens: number | null;
  cacheReadTokens: number | null;
  outcome: SummaryCallOutcome;
}

function assertText(text: string): void {
  if (text.trim() === '') throw new RangeError('a summary must not be blank');
}

/** What a pair summary and a session summary both store, read from a `turn_summaries` or `session_summaries` row. */
function summaryColumns(
  r: Record<string, unknown>,
): Pick<TurnSummary, 'sessionId' | 'text' | 'tokenCounts' | 'provider' | 'model'> {
  return {
    sessionId: r['session_id'] as string,
    text: r['text'] as string,
    tokenCounts: r['token_counts'] as SummaryTokenCounts,
    provider: r['provider'] as string,
    model: r['model'] as string,
  };
}

/**
 * Conversation memory's rows: per-pair summaries, one session summary per session, and
 * one usage row per summariser call. Summaries sit beside the messages and never change them.
 */
@Injectable()
export class SummariesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The session's pair summaries, by message id. */
  async turnSummaries(sessionId: string): Promise<Map<string, TurnSummary>> {
    if (!isUuid(sessionId)) return new Map();
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      'SELECT message_id, session_id, text, token_counts, provider, model, created_at FROM turn_summaries WHERE session_id = $1',
      [sessionId],
    );
    return new Map(
      rows.map((r) => [
        r['message_id'] as string,
        { messageId: r['message_id'] as string, ...summaryColumns(r), createdAt: r['created_at'] as Date },
      ]),
    );
  }

  /**
   * Stores the summary of one pair, once (a retried job keeps the first). Nothing is stored when the
   * message (or its session) is gone. Named statement (one per stored pair). With `call`, the usage row
   * of the summariser call that wrote it is recorded in the same statement (outcome `stored`, or
   * `gone` when nothing was written).
   * @returns true when a row was written.
   * @throws RangeError when the text is blank (never stored: a failed call is not a summary).
   */
  async saveTurnSummary(
    input: Omit<TurnSummary, 'sessionId' | 'createdAt'>,
    call?: Omit<SummaryCall, 'outcome'>,
  ): Promise<boolean> {
    assertText(input.text);
    if (call) return this.saveTurnSummaryWithCall(input, call);
    if (!isUuid(input.messageId)) return false;
    const rows = await pgQuery(
      this.dataSource,
      `INSERT INTO turn_summaries (message_id, session_id, text, token_counts, provider, model)
       SELECT m.id, m.session_id, $2, $3::jsonb, $4, $5 FROM ask_session_messages m WHERE m.id = $1
       ON CONFLICT (message_id) DO NOTHING RETURNING message_id`,
      [input.messageId, input.text, JSON.stringify(input.tokenCounts), input.provider, input.model],
      'ask_save_turn_summary',
    );
    return rows.length > 0;
  }

  /**
   * {@link saveTurnSummary} and {@link recordCall} of the call that wrote it in one statement: the
   * call's row says `stored` when the summary was written, `gone` when not (the message is gone, or
   * an earlier job of the pair wrote its summary first), as two statements would record it.
   */
  private async saveTurnSummaryWithCall(
    input: Omit<TurnSummary, 'sessionId' | 'createdAt'>,
    call: Omit<SummaryCall, 'outcome'>,
  ): Promise<boolean> {
    if (!isUuid(input.messageId)) {
      await this.recordCall({ ...call, outcome: 'gone' });
      return false;
    }
    const rows = await pgQuery<{ message_id: string }>(
      this.dataSource,
      `WITH saved AS (
         INSERT INTO turn_summaries (message_id, session_id, text, token_counts, provider, model)
         SELECT m.id, m.session_id, $2, $3::jsonb, $4, $5 FROM ask_session_messages m WHERE m.id = $1
         ON CONFLICT (message_id) DO NOTHING RETURNING message_id
       ), recorded AS (
         INSERT INTO summary_calls (project_id, session_id, message_id, kind, provider, model, prompt_tokens, completion_tokens, cache_read_tokens, outcome)
         SELECT $6::uuid, $7::uuid, $8::uuid, $9, $10, $11, $12::int, $13::int, $14::int,
                CASE WHEN EXISTS (SELECT 1 FROM saved) THEN 'stored' ELSE 'gone' END
       )
       SELECT message_id FROM saved`,
      [
        input.messageId,
        input.text,
        JSON.stringify(input.tokenCounts),
        input.provider,
        input.model,
        ...callColumns(call),
      ],
      'ask_save_turn_summary_with_call',
    );
    return rows.length > 0;
  }

  /** Caches counts of summary texts under more counter ids (merged; other ids untouched). */
  async addTurnSummaryCounts(
    counts: ReadonlyArray<{ messageId: string; tokenCounts: SummaryTokenCounts }>,
  ): Promise<void> {
    for (const c of counts) {
      await this.dataSource.query(
        'UPDATE turn_summaries SET token_counts = token_counts || $2::jsonb WHERE message_id = $1',
        [c.messageId, JSON.stringify(c.tokenCounts)],
      );
    }
  }

  /** The session's summary, or null. */
  async sessionSummary(sessionId: string): Promise<SessionSummaryRow | null> {
    if (!isUuid(sessionId)) return null;
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT session_id, text, covers_up_to, covers_turns, token_counts, provider, model, rolling_updates, updated_at
         FROM session_summaries WHERE session_id = $1`,
      [sessionId],
    );
    const r = rows[0];
    if (!r) return null;
    return {
      ...summaryColumns(r),
      coversUpTo: r['covers_up_to'] as string,
      coversTurns: r['covers_turns'] as number,
      rollingUpdates: r['rolling_updates'] as number,
      updatedAt: r['updated_at'] as Date,
    };
  }

  /**
   * Writes the session's summary when it covers more pairs than the stored one (an older or
   * concurrent job never moves it back). Nothing is written when the session or the covered message
   * is gone.
   * @returns true when a row was written.
   * @throws RangeError when the text is blank.
   */
  async saveSessionSummary(input: Omit<SessionSummaryRow, 'updatedAt'>): Promise<boolean> {
    assertText(input.text);
    if (!isUuid(input.sessionId) || !isUuid(input.coversUpTo)) return false;
    const rows = await this.dataSource.query(
      `INSERT INTO session_summaries (session_id, text, covers_up_to, covers_turns, token_counts, provider, model, rolling_updates)
       SELECT m.session_id, $2, m.id, $4, $5::jsonb, $6, $7, $8 FROM ask_session_messages m WHERE m.id = $3 AND m.session_id = $1
       ON CONFLICT (session_id) DO UPDATE SET text = EXCLUDED.text, covers_up_to = EXCLUDED.covers_up_to,
         covers_turns = EXCLUDED.covers_turns, token_counts = EXCLUDED.token_counts, provider = EXCLUDED.provider,
         model = EXCLUDED.model, rolling_updates = EXCLUDED.rolling_updates, updated_at = now()
       WHERE session_summaries.covers_turns < EXCLUDED.covers_turns
       RETURNING session_id`,
      [
        input.sessionId,
        input.text,
        input.coversUpTo,
        input.coversTurns,
        JSON.stringify(input.tokenCounts),
        input.provider,
        input.model,
        input.rollingUpdates,
      ],
    );
    return rows.length > 0;
  }

  /** Caches counts of the session summary's text under more counter ids. */
  async addSessionSummaryCounts(sessionId: string, tokenCounts: SummaryTokenCounts): Promise<void> {
    await this.dataSource.query(
      'UPDATE session_summaries SET token_counts = token_counts || $2::jsonb WHERE session_id = $1',
      [sessionId, JSON.stringify(tokenCounts)],
    );
  }

  /** Records one summariser call's usage (its own row, apart from the answers' usage). Named statement. */
  async recordCall(call: SummaryCall): Promise<void> {
    await pgQuery(
      this.dataSource,
      `INSERT INTO summary_calls (project_id, session_id, message_id, kind, provider, model, prompt_tokens, completion_tokens, cache_read_tokens, outcome)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [...callColumns(call), call.outcome],
      'ask_record_summary_call',
    );
  }

  /** The project's summariser calls, oldest first (for tests, benches and the usage read). */
  async calls(projectId: string): Promise<SummaryCall[]> {
    if (!isUuid(projectId)) return [];
    const rows: Array<Record<string, unknown>> = await this.dataSource.query(
      `SELECT project_id, session_id, message_id, kind, provider, model, prompt_tokens, completion_tokens, cache_read_tokens, outcome
         FROM summary_calls WHERE project_id = $1 ORDER BY id`,
      [projectId],
    );
    return rows.map((r) => ({
      projectId: r['project_id'] as string,
      sessionId: r['session_id'] as string,
      messageId: r['message_id'] as string | null,
      kind: r['kind'] as 'turn' | 'session',
      provider: r['provider'] as string,
      model: r['model'] as string,
      promptTokens: r['prompt_tokens'] as number | null,
      completionTokens: r['completion_tokens'] as number | null,
      cacheReadTokens: r['cache_read_tokens'] as number | null,
      outcome: r['outcome'] as SummaryCallOutcome,
    }));
  }
}

/**
 * A summariser call's values in `summary_calls` column order, up to but without `outcome`
 * (project_id … cache_read_tokens): the parameters both the insert and the combined summary write bind.
 */
function callColumns(call: Omit<SummaryCall, 'outcome'>): unknown[] {
  return [
    call.projectId,
    call.sessionId,
    call.messageId,
    call.kind,
    call.provider,
    call.model,
    call.promptTokens,
    call.completionTokens,
    call.cacheReadTokens,
  ];
}
