import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** One comparison of our prompt count with the provider's report. */
export interface TokenUsageRecord {
  /** Model id as sent to the provider. */
  model: string;
  /** Id of the token counter that produced `estimated`. */
  counterId: string;
  /** Our count of the prompt sent, in tokens. */
  estimated: number;
  /** The provider's reported prompt tokens (or, with `source: 'overflow'`, the prompt size it disclosed). */
  reported: number;
  /** The script classes that carry ≥ 10% of the request joined by `+` (token-counting `SCRIPT_CLASSES`), or null/omitted. */
  script?: string | null;
  /** `usage` (default): an answer's reported usage; `overflow`: the prompt size an overflow disclosed. */
  source?: 'usage' | 'overflow';
  /** The project whose ask it comes from (calibration is per project); null/omitted: none (model-wide only). */
  projectId?: string | null;
  /** The request's `[floor, estimate]` tokens per script class (token-counting `usageRecordOf`); null/omitted: not known. */
  masses?: Record<string, readonly [number, number]> | null;
}

/** A stored usage record. */
export interface StoredTokenUsageRecord extends TokenUsageRecord {
  script: string | null;
  source: 'usage' | 'overflow';
  projectId: string | null;
  masses: Record<string, readonly [number, number]> | null;
  createdAt: Date;
}

/** A `token_usage_records` row as both reads select it. */
export interface UsageRecordRow {
  model: string;
  counter_id: string;
  estimated: number;
  reported: number;
  script: string | null;
  source: 'usage' | 'overflow';
  project_id: string | null;
  masses: Record<string, [number, number]> | null;
  created_at: Date;
}

/**
 * The rows of {@link UsageRepository.recentPerScript} as SQL, for the given SQL expressions of the
 * model, the counter id, `n` and, for one project's records, the project id (placeholders or
 * columns; without it every project's records of the model): one statement text shared by that read
 * and `ProjectsRepository.findForSynthesis`, which reads it with the project.
 */
export function recentPerScriptSql(model: string, counterId: string, n: string, projectId?: string): string {
  return `SELECT id, model, counter_id, estimated, reported, script, source, project_id, masses, created_at FROM (
         SELECT *, row_number() OVER (PARTITION BY script ORDER BY created_at DESC, id DESC) AS rank
           FROM token_usage_records WHERE model = ${model} AND counter_id = ${counterId}${
             projectId === undefined ? '' : ` AND project_id = ${projectId}`
           }
       ) ranked WHERE rank <= ${n}`;
}

/** The order of {@link recentPerScriptSql}'s rows: by script class (null last), newest first within each. */
export const RECENT_PER_SCRIPT_ORDER = 'script NULLS LAST, created_at DESC, id DESC';

export function recordOf(r: UsageRecordRow): StoredTokenUsageRecord {
  return {
    model: r.model,
    counterId: r.counter_id,
    estimated: r.estimated,
    reported: r.reported,
    script: r.script,
    source: r.source,
    projectId: r.project_id ?? null,
    masses: r.masses ?? null,
    createdAt: r.created_at,
  };
}

/** Records of estimated vs reported prompt tokens, for per-project calibration (per script class, with each request's script masses). */
@Injectable()
export class UsageRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Stores one record.
   * @throws QueryFailedError for a negative count or an unknown source.
   */
  async record(record: TokenUsageRecord): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO token_usage_records (model, counter_id, estimated, reported, script, source, project_id, masses)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        record.model,
        record.counterId,
        record.estimated,
        record.reported,
        record.script ?? null,
        record.source ?? 'usage',
        record.projectId ?? null,
        record.masses ? JSON.stringify(record.masses) : null,
      ],
    );
  }

  /**
   * What a plan learns from, in one statement: the project's `n` newest records of the model per
   * script class (`calibration`) and every project's (`calibrationPrior`), each as
   * {@link recentPerScript} orders them.
   */
  async calibrationRecords(
    model: string,
    counterId: string,
    n: number,
    projectId: string,
  ): Promise<{ calibration: StoredTokenUsageRecord[]; calibrationPrior: StoredTokenUsageRecord[] }> {
    const agg = `coalesce(json_agg(row_to_json(r) ORDER BY r.script NULLS LAST, r.created_at DESC, r.id DESC), '[]'::json)`;
    const rows: Array<{
      own: Array<Omit<UsageRecordRow, 'created_at'> & { created_at: string }>;
      prior: Array<Omit<UsageRecordRow, 'created_at'> & { created_at: string }>;
    }> = await this.dataSource.query(
      `SELECT (SELECT ${agg} FROM (${recentPerScriptSql('$1', '$2', '$3', '$4')}) r) AS own,
              (SELECT ${agg} FROM (${recentPerScriptSql('$1', '$2', '$3')}) r) AS prior`,
      [model, counterId, Math.max(0, Math.floor(n)), projectId],
    );
    const read = (list: (typeof rows)[number]['own']) =>
      list.map((r) => recordOf({ ...r, created_at: new Date(r.created_at) }));
    return { calibration: read(rows[0].own), calibrationPrior: read(rows[0].prior) };
  }

  /** The model's `n` most recent records, newest first. */
  async recent(model: string, n: number): Promise<StoredTokenUsageRecord[]> {
    const rows = await this.dataSource.query(
      `SELECT model, counter_id, estimated, reported, script, source, project_id, masses, created_at FROM token_usage_records
        WHERE model = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
      [model, Math.max(0, Math.floor(n))],
    );
    return rows.map(recordOf);
  }

  /**
   * The model's `n` most recent records per script class (null class included), newest first within
   * each class: calibration learns each class from its own recent evidence, so a long history in one
   * script never crowds out the few records of another. With `projectId`, that project's records
   * only (what its plans learn from: another project's asks can neither evict nor outvote them);
   * without, every project's (the model-wide prior).
   */
  async recentPerScript(
    model: string,
    counterId: string,
    n: number,
    projectId?: string,
  ): Promise<StoredTokenUsageRecord[]> {
    const rows = await this.dataSource.query(
      `${recentPerScriptSql('$1', '$2', '$3', projectId === undefined ? undefined : '$4')} ORDER BY ${RECENT_PER_SCRIPT_ORDER}`,
      [model, counterId, Math.max(0, Math.floor(n)), ...(projectId === undefined ? [] : [projectId])],
    );
    return rows.map(recordOf);
  }
}
