import type { BudgetEvent, DoneEvent } from '@ask/ask-contracts';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { TokenCountsByCounter } from '../entities';
import { SessionNotFoundError } from '../errors';
import { isUuid } from '../ids';
import { pgQuery } from '../pg-query';
import type { SummaryTokenCounts, TurnSummary } from './summaries.repository';

/** A session of one project. */
export interface Session {
  id: string;
  projectId: string;
  title: string | null;
  createdAt: Date;
  /** Moves with each stored message. */
  updatedAt: Date;
}

/** A session in a listing, with how many question/answer pairs it holds. */
export interface SessionSummary extends Session {
  messageCount: number;
}

/** One stored question/answer pair. */
export interface StoredMessage {
  id: string;
  sessionId: string;
  askId: string;
  question: string;
  answer: string;
  status: 'complete';
  /** Cached counts per token counter id, in tokens. */
  tokenCounts: TokenCountsByCounter;
  /** As the provider reported them; null when it did not. */
  promptTokens: number | null;
  completionTokens: number | null;
  provider: string | null;
  model: string | null;
  /** The `budget` event the answer was planned under; null for answers stored before it was kept. */
  budget: BudgetEvent | null;
  /** The sources the answer cited (the `done` event's), best first. */
  sources: DoneEvent['sources'];
  createdAt: Date;
}

/**
 * One stored pair as the synthesis worker's history read returns it
 * ({@link SessionsRepository.historyWithTurnSummaries}): a {@link StoredMessage} without the
 * `budget` and `sources` JSON columns, which planning, memory and summaries never read (parsing them
 * for every earlier pair was synthesis CPU on each ask). A full {@link StoredMessage} fits.
 */
export type HistoryPair = Omit<StoredMessage, 'budget' | 'sources'>;

/** What the synthesis worker stores when an answer is complete. */
export interface AppendMessageInput {
  /** The project the session must belong to. */
  projectId: string;
  sessionId: string;
  /** The ask id (BullMQ job id): the persistence key, one pair per ask. */
  askId: string;
  question: string;
  answer: string;
  /** Counts already known for this pair, per counter id, in tokens. */
  tokenCounts?: TokenCountsByCounter;
  promptTokens?: number | null;
  completionTokens?: number | null;
  provider?: string | null;
  model?: string | null;
  /** The `budget` event in force for the answer (the last one published). */
  budget?: BudgetEvent | null;
  /** The sources the `done` event names. */
  sources?: DoneEvent['sources'];
}

/** Result of {@link SessionsRepository.appendMessage}. */
export interface AppendMessageResult {
  /** The stored row: the new one, or the one an earlier attempt of the same ask stored. */
  message: StoredMessage;
  /** False when a row for this ask id already existed (a retried job). */
  inserted: boolean;
}

interface MessageRow {
  id: string;
  session_id: string;
  ask_id: string;
  question: string;
  answer: string;
  status: 'complete';
  token_counts: TokenCountsByCounter;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  provider: string | null;
  model: string | null;
  budget: BudgetEvent | null;
  sources: DoneEvent['sources'];
  created_at: Date;
}

type HistoryPairRow = Omit<MessageRow, 'budget' | 'sources'>;

const MESSAGE_COLUMNS =
  'm.id, m.session_id, m.ask_id, m.question, m.answer, m.status, m.token_counts, m.prompt_tokens, ' +
  'm.completion_tokens, m.provider, m.model, m.budget, m.sources, m.created_at';

/** {@link MESSAGE_COLUMNS} less `budget` and `sources`: the columns of a {@link HistoryPair}. */
const HISTORY_PAIR_COLUMNS =
  'm.id, m.session_id, m.ask_id, m.question, m.answer, m.status, m.token_counts, m.prompt_tokens, ' +
  'm.completion_tokens, m.provider, m.model, m.created_at';

/**
 * Ask sessions and their question/answer pairs. Every read that takes a project id is scoped to
 * it: a session of another project is "not found", never returned.
 */
@Injectable()
export class SessionsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Creates an empty session for the project. Throws QueryFailedError (FK) when the project does not exist. */
  async create(projectId: string, title: string | null = null): Promise<Session> {
    const rows = await this.dataSource.query(
      'INSERT INTO ask_sessions (project_id, title) VALUES ($1, $2) RETURNING id, project_id, title, created_at, updated_at',
      [projectId, title],
    );
    return toSession(rows[0]);
  }

  /** The session when it exists AND belongs to the project; null otherwise. */
  async findForProject(projectId: string, sessionId: string): Promise<Session | null> {
    if (!isUuid(projectId) || !isUuid(sessionId)) return null;
    const rows = await this.dataSource.query(
      'SELECT id, project_id, title, created_at, updated_at FROM ask_sessions WHERE id = $1 AND project_id = $2',
      [sessionId, projectId],
    );
    return rows[0] ? toSession(rows[0]) : null;
  }

  /**
   * The project's sessions, most recently active first (`updated_at` desc), with message counts.
   * @param limit at most this many (default 100).
   * @param offset skipped first (default 0).
   */
  async list(
    projectId: string,
    { limit = 100, offset = 0 }: { limit?: number; offset?: number } = {},
  ): Promise<SessionSummary[]> {
    if (!isUuid(projectId)) return [];
    const rows = await this.dataSource.query(
      `SELECT s.id, s.project_id, s.title, s.created_at, s.updated_at,
              (SELECT count(*)::int FROM ask_session_messages m WHERE m.session_id = s.id) AS message_count
         FROM ask_sessions s
        WHERE s.project_id = $1
        ORDER BY s.updated_at DESC, s.id
        LIMIT $2 OFFSET $3`,
      [projectId, limit, offset],
    );
    return rows.map((r: SessionRow & { message_count: number }) => ({
      ...toSession(r),
      messageCount: r.message_count,
    }));
  }

  /**
   * Deletes the project's session and its messages.
   * @returns false when no such session exists for this project.
   */
  async delete(projectId: string, sessionId: string): Promise<boolean> {
    if (!isUuid(projectId) || !isUuid(sessionId)) return false;
    const [, affected] = await this.dataSource.query('DELETE FROM ask_sessions WHERE id = $1 AND project_id = $2', [
      sessionId,
      projectId,
    ]);
    return affected > 0;
  }

  /**
   * The session's question/answer pairs, oldest first (created_at, then insertion order), with their
   * cached token counts. Call after {@link findForProject} has checked the session's project.
   * @param limit only the newest `limit` pairs (still returned oldest first); default all.
   */
  async history(sessionId: string, { limit }: { limit?: number } = {}): Promise<StoredMessage[]> {
    if (!isUuid(sessionId)) return [];
    const rows: MessageRow[] = await this.dataSource.query(
      `SELECT * FROM (
         SELECT ${MESSAGE_COLUMNS}, m.seq FROM ask_session_messages m
          WHERE m.session_id = $1
          ORDER BY m.created_at DESC, m.seq DESC
          LIMIT $2
       ) newest ORDER BY created_at, seq`,
      [sessionId, limit ?? null],
    );
    return rows.map(toMessage);
  }

  /**
   * The session's pairs as {@link history} returns them (oldest first, all of them), in the same round
   * trip as {@link findForProject}'s check: null when the session does not exist or belongs to
   * another project, `[]` for a session without pairs.
   */
  async historyForProject(projectId: string, sessionId: string): Promise<StoredMessage[] | null> {
    if (!isUuid(projectId) || !isUuid(sessionId)) return null;
    const rows: Array<Partial<MessageRow>> = await this.dataSource.query(
      `SELECT ${MESSAGE_COLUMNS} FROM ask_sessions s
         LEFT JOIN ask_session_messages m ON m.session_id = s.id
        WHERE s.id = $1 AND s.project_id = $2
        ORDER BY m.created_at, m.seq`,
      [sessionId, projectId],
    );
    if (rows.length === 0) return null;
    return rows.filter((r): r is MessageRow => r.id !== null && r.id !== undefined).map(toMessage);
  }

  /**
   * {@link historyForProject}'s pairs as {@link HistoryPair}s (without `budget` and `sources`: the
   * synthesis worker's planning and summaries never read them) and the session's pair summaries
   * (`SummariesRepository.turnSummaries`, by message id) in one round trip (a named statement: every
   * synthesis run reads it): null when the session does not exist or belongs to another project.
   * The session API reads {@link historyForProject}, which keeps both columns.
   */
  async historyWithTurnSummaries(
    projectId: string,
    sessionId: string,
  ): Promise<{ pairs: HistoryPair[]; turnSummaries: Map<string, TurnSummary> } | null> {
    if (!isUuid(projectId) || !isUuid(sessionId)) return null;
    const rows = await pgQuery<Partial<HistoryPairRow> & Record<`t_${string}`, unknown>>(
      this.dataSource,
      `SELECT ${HISTORY_PAIR_COLUMNS}, t.message_id AS t_message_id, t.text AS t_text, t.token_counts AS t_token_counts,
              t.provider AS t_provider, t.model AS t_model, t.created_at AS t_created_at
         FROM ask_sessions s
         LEFT JOIN ask_session_messages m ON m.session_id = s.id
         LEFT JOIN turn_summaries t ON t.message_id = m.id
        WHERE s.id = $1 AND s.project_id = $2
        ORDER BY m.created_at, m.seq`,
      [sessionId, projectId],
      'ask_session_history_with_summaries',
    );
    if (rows.length === 0) return null;
    const pairs: HistoryPair[] = [];
    const turnSummaries = new Map<string, TurnSummary>();
    for (const r of rows) {
      if (r.id === null || r.id === undefined) continue;
      pairs.push(toHistoryPair(r as HistoryPairRow));
      if (r.t_message_id !== null && r.t_message_id !== undefined)
        turnSummaries.set(r.id, {
          messageId: r.id,
          sessionId,
          text: r.t_text as string,
          tokenCounts: r.t_token_counts as SummaryTokenCounts,
          provider: r.t_provider as string,
          model: r.t_model as string,
          createdAt: r.t_created_at as Date,
        });
    }
    return { pairs, turnSummaries };
  }

  /**
   * Stores the pair of one ask, once, in one round trip: one statement inserts the row (`INSERT …
   * ON CONFLICT (ask_id) DO NOTHING`, only into the project's own session), bumps the session's
   * `updated_at` when it inserted, and otherwise returns the row an earlier attempt of the same ask
   * stored; so a retried job neither fails nor stores twice. When a concurrent attempt committed the
   * row after this statement's snapshot was taken (the conflict waited for it, the snapshot cannot see
   * it), a second query reads it. Named statement.
   * @throws SessionNotFoundError when the session does not exist or belongs to another project.
   */
  async appendMessage(input: AppendMessageInput): Promise<AppendMessageResult> {
    if (!isUuid(input.projectId) || !isUuid(input.sessionId)) throw new SessionNotFoundError(input.sessionId);
    const rows = await pgQuery<MessageRow & { inserted: boolean }>(
      this.dataSource,
      `WITH inserted AS (
         INSERT INTO ask_session_messages
           (session_id, ask_id, question, answer, token_counts, prompt_tokens, completion_tokens, provider, model, budget, sources)
         SELECT s.id, $3, $4, $5, $6::jsonb, $7, $8, $9, $10, $11::jsonb, $12::jsonb
           FROM ask_sessions s WHERE s.id = $1 AND s.project_id = $2
         ON CONFLICT (ask_id) DO NOTHING
         RETURNING ${MESSAGE_COLUMNS.replace(/m\./g, '')}
       ), bumped AS (
         UPDATE ask_sessions SET updated_at = now() WHERE id = $1 AND EXISTS (SELECT 1 FROM inserted) RETURNING id
       )
       SELECT true AS inserted, inserted.* FROM inserted
       UNION ALL
       SELECT false AS inserted, ${MESSAGE_COLUMNS} FROM ask_session_messages m
         JOIN ask_sessions s ON s.id = m.session_id
        WHERE m.ask_id = $3 AND s.project_id = $2 AND NOT EXISTS (SELECT 1 FROM inserted)`,
      [
        input.sessionId,
        input.projectId,
        input.askId,
        input.question,
        input.answer,
        JSON.stringify(input.tokenCounts ?? {}),
        input.promptTokens ?? null,
        input.completionTokens ?? null,
        input.provider ?? null,
        input.model ?? null,
        input.budget ? JSON.stringify(input.budget) : null,
        JSON.stringify(input.sources ?? []),
      ],
      'ask_append_message',
    );
    if (rows[0]) return { message: toMessage(rows[0]), inserted: rows[0].inserted };
    const existing = await this.findByAsk(input.projectId, input.askId);
    if (!existing) throw new SessionNotFoundError(input.sessionId);
    return { message: existing, inserted: false };
  }

  /**
   * The pair stored for an ask of the project, or null (not answered yet, another project's, or its
   * session was deleted). The stored answer is what every re-run of a finished ask consults before
   * any provider call (so an ask is paid once): the retrieval worker before it embeds, the synthesis worker before
   * it calls the LLM, the reconciler before it re-enqueues. Named statement (one index look-up on
   * the UNIQUE `ask_id`).
   */
  async findByAsk(projectId: string, askId: string): Promise<StoredMessage | null> {
    if (!isUuid(projectId)) return null;
    const rows = await pgQuery<MessageRow>(
      this.dataSource,
      `SELECT ${MESSAGE_COLUMNS} FROM ask_session_messages m
         JOIN ask_sessions s ON s.id = m.session_id
        WHERE m.ask_id = $1 AND s.project_id = $2`,
      [askId, projectId],
      'ask_message_for_ask',
    );
    return rows[0] ? toMessage(rows[0]) : null;
  }

  /**
   * Caches token counts of messages under a counter id (e.g. after a model switch counted old
   * messages with a new counter), merged into `token_counts` without touching other counters.
   * @param messageIds the messages, parallel to `counts`.
   * @param counts `{ question, answer }` in tokens for each message.
   * @returns the number of messages updated.
   * @throws RangeError when the arrays differ in length.
   */
  async setTokenCounts(
    messageIds: readonly string[],
    counterId: string,
    counts: ReadonlyArray<{ question: number; answer: number }>,
  ): Promise<number> {
    if (messageIds.length !== counts.length) {
      throw new RangeError(`setTokenCounts: ${messageIds.length} message ids but ${counts.length} counts`);
    }
    if (messageIds.length === 0) return 0;
    const [, affected] = await this.dataSource.query(
      `UPDATE ask_session_messages m
          SET token_counts = m.token_counts || jsonb_build_object($2::text, jsonb_build_object('question', c.question, 'answer', c.answer))
         FROM unnest($1::uuid[], $3::int[], $4::int[]) AS c(id, question, answer)
        WHERE m.id = c.id`,
      [messageIds, counterId, counts.map((c) => c.question), counts.map((c) => c.answer)],
    );
    return affected;
  }
}

interface SessionRow {
  id: string;
  project_id: string;
  title: string | null;
  created_at: Date;
  updated_at: Date;
}

function toSession(r: SessionRow): Session {
  return { id: r.id, projectId: r.project_id, title: r.title, createdAt: r.created_at, updatedAt: r.updated_at };
}

function toHistoryPair(r: HistoryPairRow): HistoryPair {
  return {
    id: r.id,
    sessionId: r.session_id,
    askId: r.ask_id,
    question: r.question,
    answer: r.answer,
    status: r.status,
    tokenCounts: r.token_counts,
    promptTokens: r.prompt_tokens,
    completionTokens: r.completion_tokens,
    provider: r.provider,
    model: r.model,
    createdAt: r.created_at,
  };
}

function toMessage(r: MessageRow): StoredMessage {
  return { ...toHistoryPair(r), budget: r.budget ?? null, sources: r.sources ?? [] };
}
