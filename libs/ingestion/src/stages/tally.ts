import type { IngestionProgress, IngestionResult } from '../ingestion.service';

/**
 * What an ingestion did so far ({@link IngestionResult}), and its progress reported after each
 * finished document: `done` of `total`, chunks stored, and the counts by outcome.
 */
export class IngestionTally {
  readonly result: IngestionResult;
  private done = 0;

  constructor(
    total: number,
    private readonly onProgress?: (progress: IngestionProgress) => unknown,
  ) {
    this.result = { sources: total, created: 0, replaced: 0, skippedUnchanged: 0, chunks: 0, failed: 0 };
  }

  /** Counts one finished document under `outcome` (with the chunks it stored) and reports progress. */
  async finished(uri: string, outcome: 'created' | 'replaced' | 'unchanged' | 'failed', chunks = 0): Promise<void> {
    const { result } = this;
    if (outcome === 'unchanged') result.skippedUnchanged++;
    else result[outcome]++;
    result.chunks += chunks;
    await this.onProgress?.({
      done: ++this.done,
      total: result.sources,
      chunks: result.chunks,
      uri,
      created: result.created,
      replaced: result.replaced,
      unchanged: result.skippedUnchanged,
      failed: result.failed,
    });
  }
}
