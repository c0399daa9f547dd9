import type {
  ErrorEvent,
  IngestionCounts,
  IngestionFailure,
  IngestionKind,
  IngestionStatus,
  IngestionView,
} from '@ask/ask-contracts';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { EmbeddingSpace } from '../errors';
import { isUuid } from '../ids';

/** One item of a stored upload: a knowledge document, or an insight / recommendation. */
export interface IngestionItem {
  kind: 'document' | 'insight' | 'recommendation';
  /** Document uri, or the item's external id. */
  uri: string;
  /** Document title, insight name or recommendation title. */
  title: string;
  /** Document text, insight description or recommendation body. */
  text: string;
}

/** Counts of a new ingestion: nothing done yet. */
export function emptyCounts(total: number): IngestionCounts {
  return { total, done: 0, created: 0, replaced: 0, unchanged: 0, failed: 0, chunks: 0 };
}

/** Rows inserted per INSERT when storing an upload. */
const ITEM_INSERT_BATCH = 500;

interface IngestionRow {
  id: string;
  project_id: string;
  kind: IngestionKind;
  status: IngestionStatus;
  counts: IngestionCounts;
  failures: IngestionFailure[];
  error: ErrorEvent | null;
  embedding_model: string | null;
  embedding_dims: number | null;
  attempts: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/**
 * Ingestion runs (`ingestions`) and their raw uploads (`ingestion_documents`): written by the gateway
 * with its 202, advanced by the ingestion worker, read by the status route.
 */
@Injectable()
export class IngestionsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Stores a new ingestion and its items in ONE transaction, status `queued`.
   * @returns the ingestion id (a random UUID).
   */
  async create(
    projectId: string,
    kind: IngestionKind,
    items: readonly IngestionItem[],
    total = items.length,
  ): Promise<string> {
    return this.dataSource.transaction(async (manager) => {
      const [row] = await manager.query(
        `INSERT INTO ingestions (project_id, kind, counts) VALUES ($1, $2, $3) RETURNING id`,
        [projectId, kind, JSON.stringify(emptyCounts(total))],
      );
      for (let start = 0; start < items.length; start += ITEM_INSERT_BATCH) {
        const batch = items.slice(start, start + ITEM_INSERT_BATCH);
        await manager.query(
          `INSERT INTO ingestion_documents (ingestion_id, ordinal, kind, uri, title, text)
           SELECT $1, x.ordinal, x.kind, x.uri, x.title, x.text
             FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[]) AS x(ordinal, kind, uri, title, text)`,
          [
            row.id,
            batch.map((_, i) => start + i),
            batch.map((i) => i.kind),
            batch.map((i) => i.uri),
            batch.map((i) => i.title),
            batch.map((i) => i.text),
          ],
        );
      }
      return row.id as string;
    });
  }

  /** The project's ingestion, or null (unknown id, or another project's: the same answer). */
  async find(projectId: string, ingestionId: string): Promise<IngestionView | null> {
    if (!isUuid(projectId) || !isUuid(ingestionId)) return null;
    const [row] = await this.dataSource.query('SELECT * FROM ingestions WHERE id = $1 AND project_id = $2', [
      ingestionId,
      projectId,
    ]);
    return row ? toView(row) : null;
  }

  /** An ingestion by id alone (the worker's view), or null. */
  async findById(ingestionId: string): Promise<IngestionView | null> {
    if (!isUuid(ingestionId)) return null;
    const [row] = await this.dataSource.query('SELECT * FROM ingestions WHERE id = $1', [ingestionId]);
    return row ? toView(row) : null;
  }

  /** The stored items of an ingestion, in upload order (empty once the run has ended). */
  async items(ingestionId: string): Promise<IngestionItem[]> {
    return this.dataSource.query(
      'SELECT kind, uri, title, text FROM ingestion_documents WHERE ingestion_id = $1 ORDER BY ordinal',
      [ingestionId],
    );
  }

  /** Marks the run started (another attempt after a retry): status `running`, counts reset to `counts`. */
  async start(ingestionId: string, counts: IngestionCounts, space: EmbeddingSpace | null): Promise<number> {
    const [rows] = await this.dataSource.query(
      `UPDATE ingestions SET status = 'running', attempts = attempts + 1, started_at = now(), counts = $2, failures = '[]'::jsonb,
              error = NULL, embedding_model = $3, embedding_dims = $4
        WHERE id = $1 RETURNING attempts`,
      [ingestionId, JSON.stringify(counts), space?.model ?? null, space?.dimensions ?? null],
    );
    // UPDATE … RETURNING comes back from TypeORM's postgres driver as [rows, affected].
    return (rows as Array<{ attempts: number }>)[0]?.attempts ?? 0;
  }

  /** Records progress: the counts so far and every failure so far. */
  async progress(ingestionId: string, counts: IngestionCounts, failures: readonly IngestionFailure[]): Promise<void> {
    await this.dataSource.query(`UPDATE ingestions SET counts = $2, failures = $3 WHERE id = $1`, [
      ingestionId,
      JSON.stringify(counts),
      JSON.stringify(failures),
    ]);
  }

  /**
   * Ends the run: `completed` (with per-document failures, if any) or `failed` with its error; the
   * raw upload is deleted, since the knowledge tables now hold what was loaded.
   */
  async finish(
    ingestionId: string,
    status: 'completed' | 'failed',
    counts: IngestionCounts,
    failures: readonly IngestionFailure[],
    error?: ErrorEvent,
  ): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await manager.query(
        `UPDATE ingestions SET status = $2, counts = $3, failures = $4, error = $5, finished_at = now() WHERE id = $1`,
        [ingestionId, status, JSON.stringify(counts), JSON.stringify(failures), error ? JSON.stringify(error) : null],
      );
      await manager.query('DELETE FROM ingestion_documents WHERE ingestion_id = $1', [ingestionId]);
    });
  }
}

function toView(r: IngestionRow): IngestionView {
  const view: IngestionView = {
    ingestionId: r.id,
    projectId: r.project_id,
    kind: r.kind,
    status: r.status,
    counts: r.counts,
    failures: r.failures,
    createdAt: r.created_at.toISOString(),
  };
  if (r.error) view.error = r.error;
  if (r.embedding_model !== null && r.embedding_dims !== null)
    view.embedding = { model: r.embedding_model, dimensions: r.embedding_dims };
  if (r.started_at) view.startedAt = r.started_at.toISOString();
  if (r.finished_at) view.finishedAt = r.finished_at.toISOString();
  return view;
}
