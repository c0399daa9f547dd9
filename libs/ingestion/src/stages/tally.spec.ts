import type { IngestionProgress } from '../ingestion.service';
import { IngestionTally } from './tally';

// Pure: the counts and the progress of an ingestion of four documents.
describe(IngestionTally.name, () => {
  it('counts each finished document under its outcome and reports progress after each', async () => {
    const progress: IngestionProgress[] = [];
    const tally = new IngestionTally(4, (p) => progress.push(p));
    await tally.finished('a.md', 'created', 3);
    await tally.finished('b.md', 'unchanged');
    await tally.finished('c.md', 'failed');
    await tally.finished('d.md', 'replaced', 2);
    expect(tally.result).toEqual({ sources: 4, created: 1, replaced: 1, skippedUnchanged: 1, chunks: 5, failed: 1 });
    const row = { total: 4 };
    expect(progress).toEqual([
      { ...row, done: 1, uri: 'a.md', chunks: 3, created: 1, replaced: 0, unchanged: 0, failed: 0 },
      { ...row, done: 2, uri: 'b.md', chunks: 3, created: 1, replaced: 0, unchanged: 1, failed: 0 },
      { ...row, done: 3, uri: 'c.md', chunks: 3, created: 1, replaced: 0, unchanged: 1, failed: 1 },
      { ...row, done: 4, uri: 'd.md', chunks: 5, created: 1, replaced: 1, unchanged: 1, failed: 1 },
    ]);
  });

  it('counts without a progress handler', async () => {
    const tally = new IngestionTally(1);
    await tally.finished('a.md', 'created', 1);
    expect(tally.result.created).toBe(1);
  });
});
