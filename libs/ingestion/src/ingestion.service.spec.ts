import { resolve } from 'node:path';
import { countLexicalTokens, type EmbeddingProvider, type EmbeddingUsage } from '@ask/llm-providers';
import { EmbeddingLedger } from '@ask/persistence';
import {
  CredentialsCipher,
  EmbeddingSpaceMismatchError,
  InsightsRepository,
  KnowledgeRepository,
  ProjectsRepository,
  ProviderCallsRepository,
  RetrievalRepository,
} from '@ask/persistence';
import { LocalEmbeddingProvider } from '@ask/llm-providers';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { IngestionService, type IngestionProgress } from './ingestion.service';
import { loadDocuments, type SourceDocument } from './load-documents';

/** The local embedder, recording the size of every batch it is asked to embed. */
class RecordingEmbedder implements EmbeddingProvider {
  readonly batches: number[] = [];
  private readonly inner: LocalEmbeddingProvider;
  constructor(
    dimensions = 256,
    readonly maxBatchSize = 64,
  ) {
    this.inner = new LocalEmbeddingProvider({ dimensions });
  }
  get provider() {
    return this.inner.provider;
  }
  get model() {
    return this.inner.model;
  }
  get dimensions() {
    return this.inner.dimensions;
  }
  embed(texts: string[], signal?: AbortSignal, onUsage?: (usage: EmbeddingUsage) => void): Promise<number[][]> {
    this.batches.push(texts.length);
    return this.inner.embed(texts, signal, onUsage);
  }
}

describe(IngestionService.name, () => {
  let db: TestDatabase;
  let service: IngestionService;
  let projects: ProjectsRepository;
  let retrieval: RetrievalRepository;
  let kb: SourceDocument[];
  const chunkCount = async (projectId: string) =>
    (await db.dataSource.query('SELECT count(*)::int AS n FROM knowledge_chunks WHERE project_id = $1', [projectId]))[0]
      .n;

  beforeAll(async () => {
    db = await createTestDatabase();
    service = new IngestionService(new KnowledgeRepository(db.dataSource), new InsightsRepository(db.dataSource));
    projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    retrieval = new RetrievalRepository(db.dataSource);
    kb = await loadDocuments(resolve(__dirname, '..', '..', '..', 'fixtures', 'data', 'kb-pgvector'));
  });
  afterAll(() => db.drop());

  describe('ingest', () => {
    it('chunks, embeds in batches of at most maxBatchSize across documents, and stores the pgvector KB: 55 chunks', async () => {
      const project = (await projects.create({ name: 'kb' })).id;
      const embedder = new RecordingEmbedder(256, 16);
      const progress: IngestionProgress[] = [];
      const result = await service.ingest(project, kb, embedder, { onProgress: (p) => progress.push(p) });
      expect(result).toEqual({ sources: 4, created: 4, replaced: 0, skippedUnchanged: 0, chunks: 55, failed: 0 });
      expect(await chunkCount(project)).toBe(55);
      expect(embedder.batches).toEqual([16, 16, 16, 7]);
      expect(progress.map((p) => [p.done, p.total])).toEqual([
        [1, 4],
        [2, 4],
        [3, 4],
        [4, 4],
      ]);
      expect(progress[3].chunks).toBe(55);
    }, 30_000);

    it('records each embedding batch as a provider_calls row of the project, with the tokens it embedded', async () => {
      const project = (await projects.create({ name: 'kb-ledger' })).id;
      const ledger = new EmbeddingLedger(new ProviderCallsRepository(db.dataSource));
      await service.ingest(project, kb, new RecordingEmbedder(256, 16), {
        calls: { ledger, scope: { projectId: project } },
      });
      const rows: Array<Record<string, unknown>> = await db.dataSource.query(
        `SELECT operation, purpose, provider, requested_model, session_id, ask_id, input_tokens, output_tokens, cost_usd, error_code
           FROM provider_calls WHERE project_id = $1 ORDER BY started_at, id`,
        [project],
      );
      expect(rows.map((r) => r['purpose'])).toEqual(['embed', 'embed', 'embed', 'embed']);
      for (const row of rows)
        expect(row).toMatchObject({
          operation: 'embeddings',
          provider: 'local',
          requested_model: 'local-lexical-v1',
          session_id: null,
          ask_id: null,
          output_tokens: 0,
          cost_usd: '0.000000000000',
          error_code: null,
        });
      // The rows' input is exactly the stored chunks' tokens by the embedder's own rule.
      const chunks: Array<{ text: string }> = await db.dataSource.query(
        'SELECT text FROM knowledge_chunks WHERE project_id = $1',
        [project],
      );
      const counted = chunks.reduce((sum, c) => sum + countLexicalTokens(c.text), 0);
      expect(rows.reduce((sum, r) => sum + Number(r['input_tokens']), 0)).toBe(counted);
    }, 30_000);

    it('re-ingesting unchanged documents skips them and leaves the same 55 chunks', async () => {
      const project = (await projects.create({ name: 'kb' })).id;
      await service.ingest(project, kb, new LocalEmbeddingProvider());
      const embedder = new RecordingEmbedder();
      expect(await service.ingest(project, kb, embedder)).toEqual({
        sources: 4,
        created: 0,
        replaced: 0,
        skippedUnchanged: 4,
        chunks: 0,
        failed: 0,
      });
      expect(embedder.batches).toEqual([]);
      expect(await chunkCount(project)).toBe(55);
    });

    it('re-ingesting a changed document replaces its chunks, with no duplicates', async () => {
      const project = (await projects.create({ name: 'kb' })).id;
      await service.ingest(project, kb, new LocalEmbeddingProvider());
      const changed = kb.map((d) => (d.uri.endsWith('SOURCE.txt') ? { ...d, text: `${d.text}\nEdited.` } : d));
      expect(await service.ingest(project, changed, new LocalEmbeddingProvider())).toEqual({
        sources: 4,
        created: 0,
        replaced: 1,
        skippedUnchanged: 3,
        chunks: 1,
        failed: 0,
      });
      expect(await chunkCount(project)).toBe(55);
    });

    it('re-chunks everything when the chunk size changes', async () => {
      const project = (await projects.create({ name: 'kb' })).id;
      await service.ingest(project, kb, new LocalEmbeddingProvider());
      const result = await service.ingest(project, kb, new LocalEmbeddingProvider(), {
        chunkTokens: 800,
        overlapTokens: 80,
      });
      expect(result.replaced).toBe(4);
      expect(await chunkCount(project)).toBe(result.chunks);
    });

    it('finds the README chunk first for a phrase of the pgvector README', async () => {
      const project = (await projects.create({ name: 'kb' })).id;
      const embedder = new LocalEmbeddingProvider();
      await service.ingest(project, kb, embedder);
      const phrase =
        'Starting with 0.8.0, you can enable iterative index scans, which will automatically scan more of the index until enough results are found';
      const [query] = await embedder.embed([phrase]);
      const items = await retrieval.search(project, query, 5, 'local/local-lexical-v1');
      expect(items[0].source).toBe('kb-pgvector/README.md');
      expect(items[0].title).toBe('pgvector');
      expect(items[0].text).toContain(phrase);
    });

    it('refuses a provider of another length before embedding anything, and stores nothing', async () => {
      const project = (await projects.create({ name: 'kb' })).id;
      await service.ingest(project, kb.slice(0, 1), new LocalEmbeddingProvider());
      const other = new RecordingEmbedder(384);
      await expect(service.ingest(project, kb, other)).rejects.toThrow(EmbeddingSpaceMismatchError);
      await expect(service.ingest(project, kb, other)).rejects.toThrow(
        'already stores embeddings from local/local-lexical-v1 (256 dimensions); refusing to add vectors from local/local-lexical-v1 (384 dimensions)',
      );
      expect(other.batches).toEqual([]);
      expect(
        (
          await db.dataSource.query('SELECT count(*)::int AS n FROM knowledge_sources WHERE project_id = $1', [project])
        )[0].n,
      ).toBe(1);
    });

    it('stops with the abort reason when the signal is aborted', async () => {
      const project = (await projects.create({ name: 'kb' })).id;
      const controller = new AbortController();
      controller.abort(new Error('cancelled by user'));
      await expect(
        service.ingest(project, kb, new LocalEmbeddingProvider(), { signal: controller.signal }),
      ).rejects.toThrow('cancelled by user');
      expect(await chunkCount(project)).toBe(0);
    });
  });

  describe('ingestInsights', () => {
    const file = {
      insights: [
        {
          id: 'i1',
          name: 'Slow vector search',
          description: 'p95 latency of similarity queries doubled after the last import.',
        },
        { id: 'i2', name: 'Index bloat', description: 'The HNSW index grew 3x without new rows.' },
      ],
      recommendations: [
        {
          id: 'r1',
          title: 'Enable iterative scans',
          body: 'Set hnsw.iterative_scan so filtered queries return enough rows.',
        },
      ],
    };

    it('upserts insights and recommendations, skips unchanged ones, and makes them retrievable', async () => {
      const project = (await projects.create({ name: 'insights' })).id;
      const embedder = new LocalEmbeddingProvider();
      expect(await service.ingestInsights(project, file, embedder)).toEqual({
        insights: { written: 2, skippedUnchanged: 0, failed: 0 },
        recommendations: { written: 1, skippedUnchanged: 0, failed: 0 },
      });
      const edited = {
        ...file,
        insights: [file.insights[0], { ...file.insights[1], description: 'The HNSW index grew 4x.' }],
      };
      expect(await service.ingestInsights(project, edited, embedder)).toEqual({
        insights: { written: 1, skippedUnchanged: 1, failed: 0 },
        recommendations: { written: 0, skippedUnchanged: 1, failed: 0 },
      });
      const [query] = await embedder.embed(['enable iterative scans for filtered queries']);
      const items = await retrieval.search(project, query, 3, 'local/local-lexical-v1');
      expect(items[0]).toMatchObject({ kind: 'recommendation', title: 'Enable iterative scans' });
      expect(items.map((i) => i.kind).sort()).toEqual(['insight', 'insight', 'recommendation']);
    });
  });
});
