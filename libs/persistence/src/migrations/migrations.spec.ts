import { revertMigrations, runMigrations } from '../database-admin';
import { createTestDatabase, type TestDatabase } from '../testing';
import { MIGRATIONS } from './index';

const TABLES = [
  'api_keys',
  'ask_session_messages',
  'ask_sessions',
  'asks',
  'ingestion_documents',
  'ingestions',
  'insights',
  'knowledge_chunks',
  'knowledge_sources',
  'learned_windows',
  'migrations',
  'projects',
  'provider_calls',
  'recommendations',
  'session_summaries',
  'summary_calls',
  'text_corpus_stats',
  'text_term_stats',
  'token_usage_records',
  'turn_summaries',
];

describe('migrations', () => {
  let db: TestDatabase;
  const tables = async () =>
    (await db.dataSource.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`)).map(
      (r: { tablename: string }) => r.tablename,
    );
  const hnswIndexes = async () =>
    (await db.dataSource.query(`SELECT indexname FROM pg_indexes WHERE indexdef LIKE '%USING hnsw%' ORDER BY 1`)).map(
      (r: { indexname: string }) => r.indexname,
    );

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('lists the migrations oldest first', () => {
    expect(MIGRATIONS.map((m) => m.name)).toEqual([
      'InitialSchema1796015478593',
      'EmbeddingHnswIndexes1796015478594',
      'FullTextSearch1796015478700',
      'LearnedWindowsAndScriptUsage1796015479612',
      'IngestionJobs1796015480010',
      'AcceptedAsks1796015480130',
      'ProviderCalls1796015480400',
      'ConversationMemory1796015480500',
      'MessageBudgetAndSources1796015480600',
      'ProviderCallsSessionIndex1796015480700',
      'KnowledgeLanguage1796015481515',
      'EmbeddingsInline1796015481600',
      'ProjectCalibration1796015482600',
      'FullTextTermStatistics1796015482700',
      'ChunkFields1796015482800',
    ]);
  });

  it('up: gives each searchable table a generated tsvector with a GIN index on (project_id, tsv)', async () => {
    const gin = await db.dataSource.query(
      `SELECT indexname, indexdef FROM pg_indexes WHERE indexname LIKE '%_tsv_idx' ORDER BY 1`,
    );
    expect(gin.map((r: { indexname: string }) => r.indexname)).toEqual([
      'insights_tsv_idx',
      'knowledge_chunks_tsv_idx',
      'recommendations_tsv_idx',
    ]);
    expect(gin[1].indexdef).toBe(
      'CREATE INDEX knowledge_chunks_tsv_idx ON public.knowledge_chunks USING gin (project_id, tsv)',
    );
  });

  it('up: creates every table, the vector extension and 18 partial HNSW indexes', async () => {
    expect(await tables()).toEqual(TABLES);
    expect(await db.dataSource.query(`SELECT extname FROM pg_extension WHERE extname = 'vector'`)).toEqual([
      { extname: 'vector' },
    ]);
    const indexes = await hnswIndexes();
    expect(indexes).toHaveLength(18);
    expect(indexes.filter((n: string) => n.startsWith('knowledge_chunks_'))).toEqual([
      'knowledge_chunks_embedding_1024_hnsw_idx',
      'knowledge_chunks_embedding_1536_hnsw_idx',
      'knowledge_chunks_embedding_256_hnsw_idx',
      'knowledge_chunks_embedding_384_hnsw_idx',
      'knowledge_chunks_embedding_512_hnsw_idx',
      'knowledge_chunks_embedding_768_hnsw_idx',
    ]);
    const [def] = await db.dataSource.query(
      `SELECT indexdef FROM pg_indexes WHERE indexname = 'knowledge_chunks_embedding_256_hnsw_idx'`,
    );
    expect(def.indexdef).toBe(
      'CREATE INDEX knowledge_chunks_embedding_256_hnsw_idx ON public.knowledge_chunks USING hnsw (((embedding)::vector(256)) vector_cosine_ops) WHERE (embedding_dims = 256)',
    );
  });

  it('up again: nothing pending', async () => {
    expect(await runMigrations(db.url)).toEqual([]);
  });

  it('up: gives every knowledge chunk the embedding model of its source', async () => {
    const [column] = await db.dataSource.query(
      `SELECT is_nullable FROM information_schema.columns WHERE table_name = 'knowledge_chunks' AND column_name = 'embedding_model'`,
    );
    expect(column).toEqual({ is_nullable: 'NO' });
  });

  it('down: reverts the newest first, then the indexes, then the tables, and up restores them', async () => {
    expect(await revertMigrations(db.url, MIGRATIONS.length - 2)).toBe(MIGRATIONS.length - 2);
    expect(await tables()).not.toContain('learned_windows');
    expect(await tables()).not.toContain('ingestions');
    expect(await hnswIndexes()).toHaveLength(18);
    expect(await tables()).not.toContain('asks');
    expect(await tables()).not.toContain('provider_calls');
    expect(await revertMigrations(db.url, 1)).toBe(1);
    expect(await hnswIndexes()).toEqual([]);
    expect(await revertMigrations(db.url, 5)).toBe(1);
    expect(await tables()).toEqual(['migrations']);
    expect((await runMigrations(db.url)).map((m) => m.name)).toEqual(MIGRATIONS.map((m) => m.name));
    expect(await tables()).toEqual(TABLES);
  });

  it('up: keeps every embedding in its row (STORAGE MAIN), moving the out-of-line ones of existing rows in', async () => {
    const storage = async () =>
      (
        await db.dataSource.query(
          `SELECT c.relname, a.attstorage FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
            WHERE a.attname = 'embedding' AND c.relname IN ('insights', 'recommendations', 'knowledge_chunks')
            ORDER BY 1`,
        )
      ).map((r: { relname: string; attstorage: string }) => `${r.relname} ${r.attstorage}`);
    const outOfLine = async () => {
      const [{ toast }] = await db.dataSource.query(
        `SELECT reltoastrelid::regclass::text AS toast FROM pg_class WHERE relname = 'knowledge_chunks'`,
      );
      const [{ n }] = await db.dataSource.query(`SELECT count(DISTINCT chunk_id)::int AS n FROM ${toast}`);
      return n;
    };
    expect(await storage()).toEqual(['insights m', 'knowledge_chunks m', 'recommendations m']);
    // This one and the migrations after it (ProjectCalibration, FullTextTermStatistics, ChunkFields).
    expect(await revertMigrations(db.url, 4)).toBe(4);
    expect(await storage()).toEqual(['insights e', 'knowledge_chunks e', 'recommendations e']);
    // A row written with EXTERNAL: its 600-dimension embedding (2,404 bytes) goes out of line.
    const embedding = `[${Array.from({ length: 600 }, (_, i) => (i % 7) / 7).join(',')}]`;
    const [{ id: project }] = await db.dataSource.query(`INSERT INTO projects (name) VALUES ('p') RETURNING id`);
    const [{ id: source }] = await db.dataSource.query(
      `INSERT INTO knowledge_sources (project_id, uri, title, content_hash, chunk_count, embedding_dims, embedding_model)
       VALUES ($1, 'u', 't', 'h', 1, 600, 'm/x') RETURNING id`,
      [project],
    );
    await db.dataSource.query(
      `INSERT INTO knowledge_chunks (source_id, project_id, ordinal, text, token_count, embedding, embedding_dims, embedding_model)
       VALUES ($1, $2, 0, 'short', 1, $3, 600, 'm/x')`,
      [source, project, embedding],
    );
    expect(await outOfLine()).toBe(1);
    expect((await runMigrations(db.url)).map((m) => m.name)).toEqual([
      'EmbeddingsInline1796015481600',
      'ProjectCalibration1796015482600',
      'FullTextTermStatistics1796015482700',
      'ChunkFields1796015482800',
    ]);
    expect(await storage()).toEqual(['insights m', 'knowledge_chunks m', 'recommendations m']);
    expect(await outOfLine()).toBe(0);
    const [{ same }] = await db.dataSource.query(`SELECT embedding = $1::vector AS same FROM knowledge_chunks`, [
      embedding,
    ]);
    expect(same).toBe(true);
  });

  it('up: a calibration record belongs to a project (dropped with it) and carries its per-class masses; down removes both columns', async () => {
    const [{ id: project }] = await db.dataSource.query(`INSERT INTO projects (name) VALUES ('cal') RETURNING id`);
    await db.dataSource.query(
      `INSERT INTO token_usage_records (model, counter_id, estimated, reported, script, project_id, masses)
       VALUES ('m', 'f', 100, 120, 'latin', $1, '{"latin": [97, 137]}'), ('m', 'f', 100, 120, 'latin', NULL, NULL)`,
      [project],
    );
    await db.dataSource.query(`DELETE FROM projects WHERE id = $1`, [project]);
    expect(await db.dataSource.query(`SELECT project_id, masses FROM token_usage_records WHERE model = 'm'`)).toEqual([
      { project_id: null, masses: null },
    ]);
    expect(await revertMigrations(db.url, 3)).toBe(3);
    const columns = await db.dataSource.query(
      `SELECT column_name FROM information_schema.columns WHERE table_name = 'token_usage_records' AND column_name IN ('project_id', 'masses')`,
    );
    expect(columns).toEqual([]);
    expect((await runMigrations(db.url)).map((m) => m.name)).toEqual([
      'ProjectCalibration1796015482600',
      'FullTextTermStatistics1796015482700',
      'ChunkFields1796015482800',
    ]);
  });

  it("up: backfills each project's term statistics from its rows, dropped with the project", async () => {
    const [{ id: project }] = await db.dataSource.query(`INSERT INTO projects (name) VALUES ('bm25') RETURNING id`);
    expect(await revertMigrations(db.url, 2)).toBe(2);
    await db.dataSource.query(
      `INSERT INTO insights (project_id, external_id, name, description, content_hash, embedding, embedding_dims, embedding_model)
       VALUES ($1, 'a', 'Vacuum', 'vacuum reclaims storage', 'h', '[1,0,0]', 3, 'm/x'),
              ($1, 'b', 'Index', 'an index speeds reads', 'h', '[0,1,0]', 3, 'm/x')`,
      [project],
    );
    expect((await runMigrations(db.url)).map((m) => m.name)).toEqual([
      'FullTextTermStatistics1796015482700',
      'ChunkFields1796015482800',
    ]);
    // simple configuration: 'vacuum' twice in the first row counts once; 'an' is a lexeme of `simple`.
    expect(
      await db.dataSource.query(`SELECT lexeme, df FROM text_term_stats WHERE project_id = $1 ORDER BY lexeme`, [
        project,
      ]),
    ).toEqual([
      { lexeme: 'an', df: 1 },
      { lexeme: 'index', df: 1 },
      { lexeme: 'reads', df: 1 },
      { lexeme: 'reclaims', df: 1 },
      { lexeme: 'speeds', df: 1 },
      { lexeme: 'storage', df: 1 },
      { lexeme: 'vacuum', df: 1 },
    ]);
    expect(
      await db.dataSource.query(`SELECT documents, total_length FROM text_corpus_stats WHERE project_id = $1`, [
        project,
      ]),
    ).toEqual([{ documents: 2, total_length: '7' }]);
    await db.dataSource.query(`DELETE FROM projects WHERE id = $1`, [project]);
    expect(
      await db.dataSource.query(`SELECT count(*)::int AS n FROM text_term_stats WHERE project_id = $1`, [project]),
    ).toEqual([{ n: 0 }]);
  });

  it("up: a chunk's tsv holds its page title (weight A), section path (B) and text (D); existing rows get their page's title and no section, and the statistics count them", async () => {
    const [{ id: project }] = await db.dataSource.query(`INSERT INTO projects (name) VALUES ('fields') RETURNING id`);
    const [{ id: source }] = await db.dataSource.query(
      `INSERT INTO knowledge_sources (project_id, uri, title, content_hash, chunk_count, embedding_dims, embedding_model)
       VALUES ($1, 'storage.md', 'Storage', 'h', 2, 3, 'm/x') RETURNING id`,
      [project],
    );
    expect(await revertMigrations(db.url, 1)).toBe(1);
    await db.dataSource.query(
      `INSERT INTO knowledge_chunks (source_id, project_id, ordinal, text, token_count, embedding, embedding_dims, embedding_model)
       VALUES ($1, $2, 0, 'keep blocks', 2, '[1,0,0]', 3, 'm/x')`,
      [source, project],
    );
    expect((await runMigrations(db.url)).map((m) => m.name)).toEqual(['ChunkFields1796015482800']);
    await db.dataSource.query(
      `INSERT INTO knowledge_chunks (source_id, project_id, ordinal, text, token_count, embedding, embedding_dims,
                                     embedding_model, title, section)
       VALUES ($1, $2, 1, 'blocks expire', 2, '[0,1,0]', 3, 'm/x', 'Storage', 'Storage > Configuring retention')`,
      [source, project],
    );
    expect(
      await db.dataSource.query(
        `SELECT title, section, tsv::text AS tsv FROM knowledge_chunks WHERE source_id = $1 ORDER BY ordinal`,
        [source],
      ),
    ).toEqual([
      { title: 'Storage', section: null, tsv: "'blocks':3 'keep':2 'storage':1A" },
      {
        title: 'Storage',
        section: 'Storage > Configuring retention',
        tsv: "'blocks':5 'configuring':3B 'expire':6 'retention':4B 'storage':1A,2B",
      },
    ]);
    expect(
      await db.dataSource.query(`SELECT lexeme, df FROM text_term_stats WHERE project_id = $1 ORDER BY lexeme`, [
        project,
      ]),
    ).toEqual([
      { lexeme: 'blocks', df: 2 },
      { lexeme: 'configuring', df: 1 },
      { lexeme: 'expire', df: 1 },
      { lexeme: 'keep', df: 1 },
      { lexeme: 'retention', df: 1 },
      { lexeme: 'storage', df: 2 },
    ]);
    expect(
      await db.dataSource.query(`SELECT documents, total_length FROM text_corpus_stats WHERE project_id = $1`, [
        project,
      ]),
    ).toEqual([{ documents: 2, total_length: '8' }]);
    await db.dataSource.query(`DELETE FROM projects WHERE id = $1`, [project]);
  });
});
