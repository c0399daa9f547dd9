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
  /** The script class that carried ≥ 85% of the request (token-counting `SCRIPT_CLASSES`), or null/omitted. */
  script?: string | null;
  /** `usage` (default): an answer's reported usage; `overflow`: the prompt size an overflow disclosed. */
  source?: 'usage' | 'overflow';
}

/** A stored usage record. */
export interface StoredTokenUsageRecord extends TokenUsageRecord {
  script: string | null;
  source: 'usage' | 'overflow';
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
  created_at: Date;
}

/**
 * The rows of {@link UsageRepository.recentPerScript} as SQL, for the given SQL expressions of the
 * model, the counter id and `n` (placeholders or columns): one statement text shared by that read and
 * `ProjectsRepository.findForSynthesis`, which reads it with the project.
 */
export function recentPerScriptSql(model: string, counterId: string, n: string): string {
  return `SELECT id, model, counter_id, estimated, reported, script, source, created_at FROM (
         SELECT *, row_number() OVER (PARTITION BY script ORDER BY created_at DESC, id DESC) AS rank
           FROM token_usage_records WHERE model = ${model} AND counter_id = ${counterId}
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
    createdAt: r.created_at,
  };
}

/** Records of estimated vs reported prompt tokens, for per-model calibration (issue 4 item 5, issue 12 item 1). */
@Injectable()
export class UsageRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Stores one record.
   * @throws QueryFailedError for a negative count or an unknown source.
   */
  async record(record: TokenUsageRecord): Promise<void> {
    await this.dataSource.query(
      'INSERT INTO token_usage_records (model, counter_id, estimated, reported, script, source) VALUES ($1, $2, $3, $4, $5, $6)',
      [
        record.model,
        record.counterId,
        record.estimated,
        record.reported,
        record.script ?? null,
        record.source ?? 'usage',
      ],
    );
  }

  /** The model's `n` most recent records, newest first. */
  async recent(model: string, n: number): Promise<StoredTokenUsageRecord[]> {
    const rows = await this.dataSource.query(
      `SELECT model, counter_id, estimated, reported, script, source, created_at FROM token_usage_records
        WHERE model = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
      [model, Math.max(0, Math.floor(n))],
    );
    return rows.map(recordOf);
  }

  /**
   * The model's `n` most recent records per script class (null class included), newest first within
   * each class: calibration learns each class from its own recent evidence, so a long history in one
   * script never crowds out the few records of another.
   */
  async recentPerScript(model: string, counterId: string, n: number): Promise<StoredTokenUsageRecord[]> {
    const rows = await this.dataSource.query(
      `${recentPerScriptSql('$1', '$2', '$3')} ORDER BY ${RECENT_PER_SCRIPT_ORDER}`,
      [model, counterId, Math.max(0, Math.floor(n))],
    );
    return rows.map(recordOf);
  }
}
