/**
 * Benchmark of the whole ask pipeline with the embedded local providers (issue 2's acceptance):
 * gateway → retrieval queue → retrieval worker → synthesis queue → synthesis worker → Redis stream → SSE,
 * the three apps as separate processes on loopback, on a throwaway database on the local PostgreSQL.
 *
 *   node tools/run-ts.js bench/pipeline/pipeline.bench.ts [--latency-asks 200] [--sessions 16] [--asks-per-session 15]
 *
 * Phase 1 (latency): asks one at a time, in sessions of up to 5 turns, timing POST ask → `done` event.
 * Phase 2 (throughput): `--sessions` concurrent clients, each asking `--asks-per-session` questions
 * (in sessions of up to 5 turns), reporting asks/s over the wall time and latency under load.
 * Questions are the user turns of MT-Bench-101 dialogues, so each session's history grows.
 * Baselines only: nothing here asserts a time. Writes bench/pipeline/results.json and its own section
 * of bench/RESULTS.md (other sections are left as they are).
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gitCommit, machine, numberArg, percentile, repoRelative, sharedDataDir, writeResultsSection } from '../common';
import { AskClient } from '@ask/ask-client';
import { IngestionService, loadDocuments } from '@ask/ingestion';
import { LocalEmbeddingProvider } from '@ask/llm-providers';
import { ApiKeysRepository, CredentialsCipher, InsightsRepository, KnowledgeRepository, ProjectsRepository } from '@ask/persistence';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { startStack, type Stack } from '@ask/stack';

const ROOT = resolve(__dirname, '..', '..');
/** The corpus, in the full data sets (../shared/data) when there; else the committed pgvector README. */
const PRIMARY_KB = 'kb-postgresql-15-docs';
const FALLBACK_KB = join(ROOT, 'fixtures', 'data', 'kb-pgvector');
const SECTION = '## Pipeline (local providers)';
const MAX_TURNS = 5;
const WARMUP_ASKS = 5;


const LATENCY_ASKS = numberArg('latency-asks', 200);
const SESSIONS = numberArg('sessions', 16);
const ASKS_PER_SESSION = numberArg('asks-per-session', 15);

/** One session's questions (the user turns of one dialogue, at most MAX_TURNS). */
type Session = string[];

/** Dialogues of the JSONL file `path` in file order, each cut to its first MAX_TURNS user turns; one-turn dialogues skipped. */
function loadSessions(path: string): Session[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => (JSON.parse(line) as { history: Array<{ user: string }> }).history.map((turn) => turn.user).filter((q) => q && q.trim()))
    .filter((turns) => turns.length >= 2)
    .map((turns) => turns.slice(0, MAX_TURNS));
}

/** Takes sessions from `pool` until `count` asks are covered (the last session cut if needed). */
function takeAsks(pool: Session[], count: number): Session[] {
  const out: Session[] = [];
  let total = 0;
  while (total < count) {
    const next = pool.shift();
    if (!next) throw new Error('not enough MT-Bench-101 dialogues for the asks requested');
    const session = next.slice(0, count - total);
    out.push(session);
    total += session.length;
  }
  return out;
}

interface AskTiming {
  ms: number;
  turn: number;
  ok: boolean;
  error?: string;
}

/** One ask: POST → `done` (or `error`), timed on the client. */
async function timedAsk(client: AskClient, projectId: string, question: string, sessionId: string | undefined, turn: number) {
  const started = performance.now();
  let doneAt: number | undefined;
  try {
    const outcome = await client.askAndWait(projectId, question, {
      sessionId,
      onEvent: (event) => {
        if (event.type === 'done' || event.type === 'error') doneAt ??= performance.now();
      },
    });
    const ms = (doneAt ?? performance.now()) - started;
    if (outcome.error) return { timing: { ms, turn, ok: false, error: `${outcome.error.code}: ${outcome.error.error}` }, sessionId: outcome.sessionId };
    return { timing: { ms, turn, ok: true }, sessionId: outcome.sessionId };
  } catch (err) {
    return { timing: { ms: performance.now() - started, turn, ok: false, error: (err as Error).message }, sessionId };
  }
}

/** Runs sessions one after another; each session's turns share a sessionId. */
async function runSessions(client: AskClient, projectId: string, sessions: Session[]): Promise<AskTiming[]> {
  const timings: AskTiming[] = [];
  for (const session of sessions) {
    let sessionId: string | undefined;
    for (let turn = 0; turn < session.length; turn += 1) {
      const result = await timedAsk(client, projectId, session[turn], sessionId, turn + 1);
      timings.push(result.timing);
      // A failed first turn leaves no session; the next turn starts a new one.
      sessionId = result.sessionId;
    }
  }
  return timings;
}


function summarise(timings: AskTiming[]) {
  const ok = timings.filter((t) => t.ok).map((t) => t.ms).sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 10) / 10;
  const byTurn: Record<string, number> = {};
  for (let turn = 1; turn <= MAX_TURNS; turn += 1) {
    const ms = timings.filter((t) => t.ok && t.turn === turn).map((t) => t.ms).sort((a, b) => a - b);
    if (ms.length) byTurn[String(turn)] = round(percentile(ms, 50));
  }
  return {
    asks: timings.length,
    errors: timings.length - ok.length,
    errorSamples: [...new Set(timings.filter((t) => !t.ok).map((t) => t.error))].slice(0, 5),
    medianMs: round(percentile(ok, 50)),
    p95Ms: round(percentile(ok, 95)),
    maxMs: round(ok[ok.length - 1] ?? NaN),
    minMs: round(ok[0] ?? NaN),
    meanMs: round(ok.reduce((a, b) => a + b, 0) / (ok.length || 1)),
    medianMsByTurn: byTurn,
  };
}




async function main(): Promise<void> {
  const command = `node tools/run-ts.js bench/pipeline/pipeline.bench.ts${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(' ')}` : ''}`;
  const notes: string[] = [];
  // Needs the full MT-Bench-101 (its questions); throws naming the folder when it is missing.
  const data = sharedDataDir(['mt-bench-101']);
  let kb = join(data, PRIMARY_KB);
  if (!existsSync(kb)) {
    notes.push(`${repoRelative(kb)} missing: ingested the fallback ${repoRelative(FALLBACK_KB)} instead.`);
    kb = FALLBACK_KB;
  }

  const pool = loadSessions(join(data, 'mt-bench-101', 'mtbench101.jsonl'));
  const warmupSessions = takeAsks(pool, WARMUP_ASKS);
  const latencySessions = takeAsks(pool, LATENCY_ASKS);
  const throughputClients = Array.from({ length: SESSIONS }, () => takeAsks(pool, ASKS_PER_SESSION));

  let db: TestDatabase | undefined;
  let stack: Stack | undefined;
  try {
    console.log('creating a throwaway database…');
    db = await createTestDatabase();
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    const project = await projects.create({
      name: 'bench-pipeline',
      llmSettings: { provider: 'local', model: 'local' },
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
      topK: 8,
    });

    console.log(`ingesting ${repoRelative(kb)}…`);
    const ingestStarted = performance.now();
    const documents = await loadDocuments(kb);
    const ingestion = new IngestionService(new KnowledgeRepository(db.dataSource), new InsightsRepository(db.dataSource));
    const ingested = await ingestion.ingest(project.id, documents, new LocalEmbeddingProvider());
    const ingestMs = performance.now() - ingestStarted;
    console.log(`  ${ingested.sources} documents, ${ingested.chunks} chunks in ${(ingestMs / 1000).toFixed(1)} s`);

    console.log('starting the stack (gateway + retrieval worker + synthesis worker)…');
    const env = {
      DATABASE_URL: db.url,
      ASK_KEY_PREFIX: `bench-${randomUUID()}`,
      LOCAL_LLM_CHUNK_DELAY_MS: '0',
      LOG_LEVEL: 'warn',
      RETRIEVAL_CONCURRENCY: '16',
      SYNTHESIS_CONCURRENCY: '16',
      // A benchmark measures the pipeline, not the per-project rate limit (default 60 asks a minute).
      ASK_RATE_LIMIT_PER_MINUTE: '1000000',
    };
    stack = await startStack({ env, logDir: join(ROOT, 'tmp', 'bench-pipeline-logs') });
    const apiKey = (await new ApiKeysRepository(db.dataSource).create(project.id, 'bench')).key;
    const client = new AskClient(stack.gatewayUrl, apiKey);

    console.log(`warm-up: ${WARMUP_ASKS} asks (not counted)…`);
    const warm = await runSessions(client, project.id, warmupSessions);
    const warmErrors = warm.filter((t) => !t.ok);
    if (warmErrors.length) console.warn(`  warm-up errors: ${warmErrors.map((t) => t.error).join('; ')}`);

    console.log(`phase 1 (latency): ${LATENCY_ASKS} asks one at a time, ${latencySessions.length} sessions of up to ${MAX_TURNS} turns…`);
    const loadBefore = { latency: loadavg()[0], throughput: 0 };
    const latency = summarise(await runSessions(client, project.id, latencySessions));
    console.log(`  median ${latency.medianMs} ms, p95 ${latency.p95Ms} ms, max ${latency.maxMs} ms, errors ${latency.errors}`);

    const totalThroughputAsks = SESSIONS * ASKS_PER_SESSION;
    console.log(`phase 2 (throughput): ${SESSIONS} concurrent clients × ${ASKS_PER_SESSION} asks = ${totalThroughputAsks}…`);
    loadBefore.throughput = loadavg()[0];
    const wallStarted = performance.now();
    const perClient = await Promise.all(throughputClients.map((sessions) => runSessions(client, project.id, sessions)));
    const wallMs = performance.now() - wallStarted;
    const load = summarise(perClient.flat());
    const asksPerSecond = Math.round(((load.asks - load.errors) / (wallMs / 1000)) * 100) / 100;
    console.log(`  ${asksPerSecond} asks/s over ${(wallMs / 1000).toFixed(1)} s; median ${load.medianMs} ms, p95 ${load.p95Ms} ms, errors ${load.errors}`);

    const results = {
      benchmark: 'pipeline (local providers)',
      date: new Date().toISOString(),
      command,
      commit: gitCommit(),
      machine: machine(),
      setup: {
        processes: 'api-gateway, retrieval-worker, synthesis-worker as separate Node processes (tools/stack), loopback HTTP + SSE',
        env: { ...env, DATABASE_URL: '<throwaway database on the local PostgreSQL>', ASK_KEY_PREFIX: 'bench-<uuid>' },
        project: { llm: 'local/local', embedding: 'local/local-lexical-v1 (256 dims)', topK: 8 },
        questions: 'MT-Bench-101 user turns (mtbench101.jsonl, dialogues in file order, cut to 5 turns; same sessionId per dialogue)',
        warmupAsks: WARMUP_ASKS,
        timing: 'client side, from just before POST /api/v1/projects/:id/ask to the arrival of the done event on the SSE stream',
      },
      ingestion: { corpus: repoRelative(kb), documents: ingested.sources, chunks: ingested.chunks, seconds: Math.round(ingestMs / 100) / 10 },
      latency: { ...latency, sessions: latencySessions.length },
      throughput: {
        concurrentSessions: SESSIONS,
        asksPerClient: ASKS_PER_SESSION,
        wallSeconds: Math.round(wallMs / 100) / 10,
        asksPerSecond,
        ...load,
      },
      loadAverage1mAtPhaseStart: { latency: Math.round(loadBefore.latency * 100) / 100, throughput: Math.round(loadBefore.throughput * 100) / 100 },
      notes,
    };
    writeFileSync(join(__dirname, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);

    const m = results.machine;
    const turns = (byTurn: Record<string, number>) => Object.entries(byTurn).map(([t, ms]) => `${t}: ${ms}`).join(', ');
    writeResultsSection(SECTION, `${SECTION}

Baselines, no targets. Whole ask pipeline (gateway → retrieval worker → synthesis worker → SSE, three processes on loopback) with the embedded \`local\` embedding and LLM providers, \`LOCAL_LLM_CHUNK_DELAY_MS=0\`, worker concurrency 16. Time = client side, POST ask → \`done\` event. Questions: MT-Bench-101 user turns, one session per dialogue (up to 5 turns, history grows). Raw figures: \`bench/pipeline/results.json\`.

- Command: \`${command}\`
- Date: ${results.date} (commit ${results.commit})
- Machine: ${m.nproc} CPUs (nproc), ${m.totalMemoryGiB} GiB RAM, ${m.cpuModel}, Node ${m.node}
- Ingestion: \`${repoRelative(kb)}\`, ${ingested.sources} documents → ${ingested.chunks} chunks in ${results.ingestion.seconds} s (local lexical embedder, in the bench process)${notes.length ? `\n- Notes: ${notes.join(' ')}` : ''}

| Phase | Asks | Errors | Median (ms) | p95 (ms) | Max (ms) | Asks/s |
|---|---:|---:|---:|---:|---:|---:|
| Sequential (1 session at a time) | ${latency.asks} | ${latency.errors} | ${latency.medianMs} | ${latency.p95Ms} | ${latency.maxMs} | ${Math.round((1000 / latency.meanMs) * 100) / 100} |
| ${SESSIONS} concurrent sessions | ${load.asks} | ${load.errors} | ${load.medianMs} | ${load.p95Ms} | ${load.maxMs} | ${asksPerSecond} |

Median latency by turn (sequential, ms): ${turns(latency.medianMsByTurn)}. Under load: ${turns(load.medianMsByTurn)}.
Sequential asks/s is 1000 / mean latency; concurrent asks/s is successful asks / wall time of phase 2 (${results.throughput.wallSeconds} s).
`);
    console.log('wrote bench/pipeline/results.json and the "Pipeline (local providers)" section of bench/RESULTS.md');
    if (latency.errors || load.errors) {
      console.error(`errors: ${JSON.stringify([...latency.errorSamples, ...load.errorSamples])}`);
      process.exitCode = 1;
    }
  } finally {
    await stack?.stop().catch((err) => console.error(`stack.stop: ${(err as Error).message}`));
    await db?.drop().catch((err) => console.error(`db.drop: ${(err as Error).message}`));
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
