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
  /** The provider's reported prompt tokens. */
  reported: number;
}

/** A stored usage record. */
export interface StoredTokenUsageRecord extends TokenUsageRecord {
  createdAt: Date;
}

/** Records of estimated vs reported prompt tokens, for per-model calibration (issue 4, item 5). */
@Injectable()
export class UsageRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Stores one record.
   * @throws QueryFailedError for a negative count.
   */
  async record(record: TokenUsageRecord): Promise<void> {
    await this.dataSource.query(
      'INSERT INTO token_usage_records (model, counter_id, estimated, reported) VALUES ($1, $2, $3, $4)',
      [record.model, record.counterId, record.estimated, record.reported],
    );
  }

  /** The model's `n` most recent records, newest first. */
  async recent(model: string, n: number): Promise<StoredTokenUsageRecord[]> {
    const rows = await this.dataSource.query(
      `SELECT model, counter_id, estimated, reported, created_at FROM token_usage_records
        WHERE model = $1 ORDER BY created_at DESC, id DESC LIMIT $2`,
      [model, Math.max(0, Math.floor(n))],
    );
    return rows.map((r: { model: string; counter_id: string; estimated: number; reported: number; created_at: Date }) => ({
      model: r.model,
      counterId: r.counter_id,
      estimated: r.estimated,
      reported: r.reported,
      createdAt: r.created_at,
    }));
  }
}
