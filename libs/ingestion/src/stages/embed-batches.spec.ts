import { isAskError } from '@ask/ask-errors';
import { type EmbeddingProvider, UpstreamFailureError } from '@ask/llm-providers';
import { EmbeddingCallError } from '../embed-with-retry';
import { EmbeddingBatches, type PendingDocument, refusedText } from './embed-batches';

/**
 * An embedder whose answers the spec scripts: a text containing `POISON` is refused (400, the
 * document's own failure), any text containing `AUTH` fails the run (401); every other text gets
 * the vector [length, 1]. Each call is logged.
 */
class ScriptedEmbedder implements EmbeddingProvider {
  readonly provider = 'openai' as const;
  readonly model = 'scripted';
  readonly dimensions = 2;
  constructor(
    readonly maxBatchSize: number,
    private readonly log: string[],
  ) {}
  async embed(texts: string[]): Promise<number[][]> {
    this.log.push(`embed ${texts.join(',')}`);
    const status = texts.some((t) => t.includes('AUTH')) ? 401 : texts.some((t) => t.includes('POISON')) ? 400 : 0;
    if (status) throw new UpstreamFailureError({ kind: 'fatal', status, message: 'refused' }, 'openai', 1, false);
    return texts.map((t) => [t.length, 1]);
  }
}

const chunks = (...texts: string[]) => texts.map((text) => ({ text, tokenCount: 1 }));

// Pure: the embed stage with a scripted provider (no retries: every scripted failure is final).
describe(EmbeddingBatches.name, () => {
  function batches(maxBatchSize: number) {
    const log: string[] = [];
    const finished: Array<PendingDocument<string>> = [];
    const embedder = new ScriptedEmbedder(maxBatchSize, log);
    const stage = new EmbeddingBatches<string>(embedder, { providerRetries: 0 }, async (entry) => {
      log.push(`finish ${entry.doc}${entry.failed ? ` failed ${entry.failed.code}` : ''}`);
      finished.push(entry);
    });
    return { log, finished, stage };
  }

  it('fills batches across documents and finishes each document in order once all its chunks are embedded', async () => {
    const { log, finished, stage } = batches(2);
    await stage.add('A', 'ha', chunks('a0', 'a1', 'a2'), false);
    await stage.add('B', 'hb', chunks('b0'), false);
    await stage.add('C', 'hc', chunks('c00', 'c1'), false);
    await stage.drain();
    expect(log).toEqual(['embed a0,a1', 'embed a2,b0', 'finish A', 'finish B', 'embed c00,c1', 'finish C']);
    expect(finished.map((e) => [e.doc, e.hash, e.embeddings, e.missing])).toEqual([
      [
        'A',
        'ha',
        [
          [2, 1],
          [2, 1],
          [2, 1],
        ],
        0,
      ],
      ['B', 'hb', [[2, 1]], 0],
      [
        'C',
        'hc',
        [
          [3, 1],
          [2, 1],
        ],
        0,
      ],
    ]);
  });

  it('finishes a skipped document after the documents added before it, and embeds the last partial batch on drain', async () => {
    const { log, stage } = batches(4);
    await stage.add('A', 'ha', chunks('a0'), false);
    await stage.add('S', 'hs', [], true);
    expect(log).toEqual([]);
    await stage.drain();
    expect(log).toEqual(['embed a0', 'finish A', 'finish S']);
  });

  it('retries a refused shared batch per document: only the refused document fails, the others are embedded', async () => {
    const { log, finished, stage } = batches(3);
    await stage.add('A', 'ha', chunks('a0'), false);
    await stage.add('P', 'hp', chunks('POISON'), false);
    await stage.add('C', 'hc', chunks('c0'), false);
    await stage.drain();
    expect(log).toEqual([
      'embed a0,POISON,c0',
      'embed a0',
      'embed POISON',
      'embed c0',
      'finish A',
      'finish P failed embedding_upstream',
      'finish C',
    ]);
    expect(finished.map((e) => e.embeddings.filter(Boolean).length)).toEqual([1, 0, 1]);
  });

  it('drops the queued chunks of a document refused in a batch of its own', async () => {
    const { log, stage } = batches(1);
    await stage.add('P', 'hp', chunks('POISON', 'p1', 'p2'), false);
    await stage.add('B', 'hb', chunks('b0'), false);
    await stage.drain();
    expect(log).toEqual(['embed POISON', 'finish P failed embedding_upstream', 'embed b0', 'finish B']);
  });

  it('stops the run with the typed error of a failure that is not the text’s (401), finishing nothing', async () => {
    const { log, stage } = batches(2);
    const err = await stage.add('A', 'ha', chunks('AUTH', 'a1'), false).catch((e: unknown) => e);
    expect(isAskError(err) ? [err.status, err.code] : err).toEqual([502, 'embedding_auth_failed']);
    expect(log).toEqual(['embed AUTH,a1']);
  });
});

describe(refusedText.name, () => {
  it('rethrows what is not a provider failure', () => {
    const err = new Error('connection to PostgreSQL lost');
    expect(() => refusedText(err)).toThrow(err);
  });

  it('returns the typed error of a document-scoped failure', () => {
    const error = refusedText(
      new EmbeddingCallError({ error: { code: 'embedding_upstream' } as never, scope: 'document', retryable: false }),
    );
    expect(error).toEqual({ code: 'embedding_upstream' });
  });
});
