import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { isUuid } from '../ids';
import { pgQuery } from '../pg-query';

/** How an ask stands in the `asks` table: open until its stream's terminal event is reconciled. */
export type AskState = 'accepted' | 'done' | 'error';

/** An accepted ask, as the gateway records it with the 202. */
export interface AcceptedAsk {
  id: string;
  projectId: string;
  sessionId: string;
  question: string;
  acceptedAt: Date;
}

/** A recorded ask with its state. */
export interface AskRecord extends AcceptedAsk {
  state: AskState;
  errorCode: string | null;
  /** Times the reconciler re-enqueued it after Redis lost it. */
  requeues: number;
  endedAt: Date | null;
}

interface AskRow {
  id: string;
  project_id: string;
  session_id: string;
  question: string;
  accepted_at: Date;
  state: AskState;
  error_code: string | null;
  requeues: number;
  ended_at: Date | null;
}

const toRecord = (r: AskRow): AskRecord => ({
  id: r.id,
  projectId: r.project_id,
  sessionId: r.session_id,
  question: r.question,
  acceptedAt: new Date(r.accepted_at),
  state: r.state,
  errorCode: r.error_code,
  requeues: r.requeues,
  endedAt: r.ended_at ? new Date(r.ended_at) : null,
});

/** The open asks one reconciler pass holds (locked) while it checks them; see {@link AsksRepository.reconcile}. */
export interface OpenAsksBatch {
  asks: AskRecord[];
  /** Marks an ask ended (`done`, or `error` with its code). */
  finish(id: string, state: 'done' | 'error', errorCode?: string): Promise<void>;
  /** Counts one re-enqueue of an ask. */
  requeued(id: string): Promise<void>;
}

/**
 * The durable record of accepted asks (`asks`): written by the gateway with the 202, ended when the
 * ask's terminal event is seen, so that an ask Redis lost is never silently dropped.
 */
@Injectable()
export class AsksRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Records an accepted ask (state `accepted`). @throws QueryFailedError for an unknown project. */
  async record(ask: AcceptedAsk): Promise<void> {
    await this.dataSource.query(
      'INSERT INTO asks (id, project_id, session_id, question, accepted_at) VALUES ($1, $2, $3, $4, $5)',
      [ask.id, ask.projectId, ask.sessionId, ask.question, ask.acceptedAt],
    );
  }

  /**
   * Records an accepted ask in an existing session, in one round trip with the check that the session
   * exists and belongs to the ask's project (what the gateway used to ask first, separately).
   * @returns false, recording nothing, when there is no such session in the project.
   */
  async recordInSession(ask: AcceptedAsk): Promise<boolean> {
    if (!isUuid(ask.projectId) || !isUuid(ask.sessionId)) return false;
    const rows = await pgQuery<{ id: string }>(
      this.dataSource,
      `INSERT INTO asks (id, project_id, session_id, question, accepted_at)
       SELECT $1, $2, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM ask_sessions WHERE id = $3 AND project_id = $2)
       RETURNING id`,
      [ask.id, ask.projectId, ask.sessionId, ask.question, ask.acceptedAt],
      'ask_record_in_session',
    );
    return rows.length === 1;
  }

  /**
   * Creates a session titled `title` and records the accepted ask in it, in one statement (one
   * round trip instead of two). @returns the new session's id.
   * @throws QueryFailedError for an unknown project.
   */
  async recordInNewSession(ask: Omit<AcceptedAsk, 'sessionId'>, title: string | null): Promise<string> {
    const rows = await pgQuery<{ session_id: string }>(
      this.dataSource,
      `WITH s AS (INSERT INTO ask_sessions (project_id, title) VALUES ($2, $5) RETURNING id)
       INSERT INTO asks (id, project_id, session_id, question, accepted_at)
       SELECT $1, $2, s.id, $3, $4 FROM s
       RETURNING session_id`,
      [ask.id, ask.projectId, ask.question, ask.acceptedAt, title],
      'ask_record_in_new_session',
    );
    return rows[0].session_id;
  }

  /** The ask's record, or null. */
  async find(id: string): Promise<AskRecord | null> {
    if (!isUuid(id)) return null;
    const rows: AskRow[] = await this.dataSource.query('SELECT * FROM asks WHERE id = $1', [id]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  /** Open asks of one session of the project, oldest first. */
  async openInSession(projectId: string, sessionId: string): Promise<AskRecord[]> {
    if (!isUuid(projectId) || !isUuid(sessionId)) return [];
    const rows: AskRow[] = await this.dataSource.query(
      `SELECT * FROM asks WHERE session_id = $1 AND project_id = $2 AND state = 'accepted' ORDER BY accepted_at`,
      [sessionId, projectId],
    );
    return rows.map(toRecord);
  }

  /** Marks an open ask ended; an ask already ended keeps its first ending. @returns whether it was open. */
  async finish(id: string, state: 'done' | 'error', errorCode?: string): Promise<boolean> {
    return finish(this.dataSource.manager, id, state, errorCode);
  }

  /**
   * Runs `check` over up to `limit` open asks accepted before `acceptedBefore`, oldest first, locked
   * for the pass (`FOR UPDATE SKIP LOCKED`): reconcilers on several worker replicas never handle the
   * same ask at once. Everything `check` records commits together when it returns.
   */
  async reconcile<T>(acceptedBefore: Date, limit: number, check: (batch: OpenAsksBatch) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      const rows: AskRow[] = await manager.query(
        `SELECT * FROM asks WHERE state = 'accepted' AND accepted_at < $1 ORDER BY accepted_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [acceptedBefore, limit],
      );
      return check({
        asks: rows.map(toRecord),
        finish: async (id, state, errorCode) => void (await finish(manager, id, state, errorCode)),
        requeued: async (id) =>
          void (await manager.query('UPDATE asks SET requeues = requeues + 1 WHERE id = $1', [id])),
      });
    });
  }
}

async function finish(
  manager: EntityManager,
  id: string,
  state: 'done' | 'error',
  errorCode?: string,
): Promise<boolean> {
  const [, affected] = await manager.query(
    `UPDATE asks SET state = $2, error_code = $3, ended_at = now() WHERE id = $1 AND state = 'accepted'`,
    [id, state, errorCode ?? null],
  );
  return affected > 0;
}
