/**
 * Vector search at scale (issue 15, item 4): 100,000 knowledge chunks across 100 projects.
 *
 *   node tools/run-ts.js bench/retrieval/scale.bench.ts [--projects 100] [--chunks 1000] [--queries 300] [--data DIR]
 *
 * Vectors are synthetic copies of real ones: the first 2,000 characters of `chunks` pages of the
 * PostgreSQL 15 manual embedded with the lexical `local` embedder (256 dimensions), and each project
 * holds all of them, each moved by its own Gaussian noise (σ = 0.02 per component, renormalised), so
 * projects share the real data's shape without sharing a vector. They are bulk-inserted with the
 * 256-dimension HNSW index dropped, then the migration's index is built again (timed, size read).
 *
 * Each query is a real page vector with fresh noise, asked of a random project through
 * `RetrievalRepository.search` (top-K 10, the production path: tenant filter, `hnsw.iterative_scan =
 * strict_order`, ef_search 40), and also with the HNSW index forced (sorting priced out, as the
 * spec does), to see the index's own recall and latency. recall@10 is measured against an exact scan
 * of the project's rows (index scans off). Writes bench/retrieval/scale-results.json and its own
 * section of bench/RESULTS.md.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gitCommit, machine, numberArg, percentile, sharedDataDir, writeResultsSection } from '../common';
import { loadDocuments } from '@ask/ingestion';
import { LocalEmbeddingProvider } from '@ask/llm-providers';
import { CredentialsCipher, ProjectsRepository, RetrievalRepository, vectorParam } from '@ask/persistence';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { createTestDatabase } from '@ask/persistence/testing';

const SECTION = '## Vector search at 100K chunks';
const PROJECTS = numberArg('projects', 100);
const CHUNKS = numberArg('chunks', 1000);
const QUERIES = numberArg('queries', 300);
const dataArg = process.argv.indexOf('--data');
const DATA = dataArg >= 0 ? resolve(process.argv[dataArg + 1]) : sharedDataDir(['kb-postgresql-15-docs']);
const NOISE = 0.02;
const TOP_K = 10;
const INDEX = 'knowledge_chunks_embedding_256_hnsw_idx';
/** The `provider/model` ingestion stores for the lexical embedder. */
const MODEL = 'local/local-lexical-v1';

/** Seeded PRNG (mulberry32) and a Box–Muller normal, so every run builds the same vectors. */
function normals(seed: number): () => number {
  let state = seed >>> 0;
  const uniform = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) + 1) / 4294967297;
  };
  return () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
}

function jitter(vector: readonly number[], normal: () => number): number[] {
  const moved = vector.map((x) => x + NOISE * normal());
  const norm = Math.hypot(...moved);
  return moved.map((x) => x / norm);
}

const round = (x: number, places = 2) => Math.round(x * 10 ** places) / 10 ** places;

async function main(): Promise<void> {
  const pages = (await loadDocuments(join(DATA, 'kb-postgresql-15-docs'), { sourceName: 'postgresql-15' })).slice(0, CHUNKS);
  const embedder = new LocalEmbeddingProvider();
  const base = await embedder.embed(pages.map((p) => p.text.slice(0, 2000)));
  const db = await createTestDatabase();
  try {
    const ds = db.dataSource;
    const projects = new ProjectsRepository(ds, new CredentialsCipher(undefined));
    const retrieval = new RetrievalRepository(ds);
    const normal = normals(2026);
    const ids: string[] = [];
    await ds.query(`DROP INDEX ${INDEX}`);
    const loadStarted = performance.now();
    for (let p = 0; p < PROJECTS; p++) {
      const project = await projects.create({ name: `scale ${p}` });
      ids.push(project.id);
      const [source] = await ds.query(
        `INSERT INTO knowledge_sources (project_id, uri, title, content_hash, chunk_count, embedding_dims, embedding_model)
         VALUES ($1, 'scale', 'Scale', 'h', $2, 256, $3) RETURNING id`,
        [project.id, base.length, MODEL],
      );
      await ds.query(
        `INSERT INTO knowledge_chunks (source_id, project_id, ordinal, text, token_count, embedding, embedding_dims, embedding_model)
         SELECT $1, $2, o - 1, 'chunk ' || o, 1, v::vector, 256, $4 FROM unnest($3::text[]) WITH ORDINALITY AS t(v, o)`,
        [source.id, project.id, base.map((v) => vectorParam(jitter(v, normal))), MODEL],
      );
    }
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    const buildStarted = performance.now();
    await ds.query(
      `CREATE INDEX ${INDEX} ON knowledge_chunks USING hnsw ((embedding::vector(256)) vector_cosine_ops) WHERE embedding_dims = 256`,
    );
    const buildSeconds = (performance.now() - buildStarted) / 1000;
    await ds.query('ANALYZE knowledge_sources, knowledge_chunks');
    const [{ size }] = await ds.query(`SELECT pg_relation_size($1::regclass) AS size`, [INDEX]);
    const [{ rows }] = await ds.query('SELECT count(*)::int AS rows FROM knowledge_chunks');
    console.log(`${rows} chunks loaded in ${loadSeconds.toFixed(1)} s; index built in ${buildSeconds.toFixed(1)} s, ${(Number(size) / 2 ** 20).toFixed(1)} MiB`);

    const exact = async (projectId: string, query: number[]): Promise<string[]> =>
      ds.transaction(async (m) => {
        await m.query('SET LOCAL enable_indexscan = off');
        await m.query('SET LOCAL enable_bitmapscan = off');
        const found: Array<{ id: string }> = await m.query(
          `SELECT id FROM knowledge_chunks WHERE project_id = $1 AND embedding_dims = 256
           ORDER BY embedding::vector(256) <=> $2::vector(256), id LIMIT ${TOP_K}`,
          [projectId, vectorParam(query)],
        );
        return found.map((r) => r.id);
      });
    const forcedHnsw = async (projectId: string, query: number[]) =>
      ds.transaction(async (m) => {
        await m.query('SET LOCAL enable_sort = off');
        await m.query(`SELECT set_config('hnsw.iterative_scan', 'strict_order', true), set_config('hnsw.ef_search', '40', true)`);
        const found: Array<{ id: string }> = await m.query(
          `SELECT id FROM knowledge_chunks WHERE project_id = $1 AND embedding_dims = 256
           ORDER BY embedding::vector(256) <=> $2::vector(256) LIMIT ${TOP_K}`,
          [projectId, vectorParam(query)],
        );
        return found.map((r) => r.id);
      });
    const plan = (
      await ds.query(
        `EXPLAIN (COSTS OFF) SELECT id FROM knowledge_chunks WHERE project_id = $1 AND embedding_dims = 256
         ORDER BY embedding::vector(256) <=> $2::vector(256) LIMIT ${TOP_K}`,
        [ids[0], vectorParam(base[0])],
      )
    )
      .map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN'].trim())
      .filter((line: string) => /Scan/.test(line));

    const modes = { production: { times: [] as number[], recall: [] as number[] }, hnsw: { times: [] as number[], recall: [] as number[] } };
    const pick = normals(7);
    for (let q = 0; q < QUERIES; q++) {
      const projectId = ids[Math.floor(Math.abs(pick() * 1e6)) % ids.length];
      const query = jitter(base[Math.floor(Math.abs(pick() * 1e6)) % base.length], pick);
      const truth = new Set(await exact(projectId, query));
      let t = performance.now();
      const got = (await retrieval.search(projectId, query, TOP_K, MODEL)).map((i) => i.id);
      modes.production.times.push(performance.now() - t);
      modes.production.recall.push(got.filter((id) => truth.has(id)).length / truth.size);
      t = performance.now();
      const viaIndex = await forcedHnsw(projectId, query);
      modes.hnsw.times.push(performance.now() - t);
      modes.hnsw.recall.push(viaIndex.filter((id) => truth.has(id)).length / truth.size);
    }
    const summary = Object.fromEntries(
      Object.entries(modes).map(([mode, m]) => {
        const times = [...m.times].sort((a, b) => a - b);
        return [mode, { p50Ms: round(percentile(times, 50)), p95Ms: round(percentile(times, 95)), recallAt10: round(m.recall.reduce((a, b) => a + b, 0) / m.recall.length, 3) }];
      }),
    ) as Record<'production' | 'hnsw', { p50Ms: number; p95Ms: number; recallAt10: number }>;
    const command = `node tools/run-ts.js bench/retrieval/scale.bench.ts --projects ${PROJECTS} --chunks ${CHUNKS} --queries ${QUERIES}`;
    const run = {
      date: new Date().toISOString(),
      commit: gitCommit(),
      machine: machine(),
      command,
      chunks: rows,
      projects: PROJECTS,
      loadSeconds: round(loadSeconds, 1),
      indexBuildSeconds: round(buildSeconds, 1),
      indexMiB: round(Number(size) / 2 ** 20, 1),
      productionPlan: plan,
      ...summary,
    };
    writeFileSync(join(__dirname, 'scale-results.json'), `${JSON.stringify(run, null, 2)}\n`);
    const goal = (ok: boolean) => (ok ? 'met' : 'missed');
    writeResultsSection(
      SECTION,
      [
        SECTION,
        '',
        `Command: \`${command}\` (commit ${run.commit}, ${run.date.slice(0, 10)}, ${run.machine.nproc} cores, Node ${run.machine.node}).`,
        '',
        `${rows} chunks in ${PROJECTS} projects (synthetic copies of ${CHUNKS} real page vectors of the PostgreSQL manual, lexical`,
        `embedder, 256 dimensions, σ = ${NOISE} noise per project). Bulk load ${run.loadSeconds} s; HNSW index`,
        `\`${INDEX}\` (m = 16, ef_construction = 64) built in ${run.indexBuildSeconds} s, ${run.indexMiB} MiB.`,
        `${QUERIES} queries, each a page vector with fresh noise asked of a random project, top-K ${TOP_K};`,
        'recall@10 against an exact scan of that project\'s rows.',
        '',
        '| path | p50 ms | p95 ms | recall@10 |',
        '| --- | --- | --- | --- |',
        `| production (\`RetrievalRepository.search\`, the planner's choice: ${plan.join('; ')}) | ${summary.production.p50Ms} | ${summary.production.p95Ms} | ${summary.production.recallAt10} |`,
        `| HNSW index forced (tenant filter after the index, iterative scan strict_order, ef_search 40) | ${summary.hnsw.p50Ms} | ${summary.hnsw.p95Ms} | ${summary.hnsw.recallAt10} |`,
        '',
        `Goals (production path): p50 ≤ 10 ms ${goal(summary.production.p50Ms <= 10)}, p95 ≤ 30 ms ${goal(summary.production.p95Ms <= 30)},`,
        `recall@10 ≥ 0.95 ${goal(summary.production.recallAt10 >= 0.95)}.`,
        '',
      ].join('\n'),
    );
  } finally {
    await db.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
