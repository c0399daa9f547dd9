/**
 * Fair shares between tenants (issue 27): project B's single ask, POST → `done`, idle and while
 * project A floods the queues with `--flood` asks (default 1,000; the rate limit raised, as an
 * operator or one customer's many projects could), as a ratio in one run, with the load average.
 * Also: how many of A's asks had finished when B's did (strict FIFO puts B behind all of them), that
 * every one of A's asks finished with one stored row, and in how many of A's sessions the rows are
 * not in POST order. Four processes (tools/stack), the local providers, default concurrency, a
 * throwaway database on the shared PostgreSQL and a unique key prefix on the shared Redis.
 *
 *   node tools/run-ts.js bench/fairness/fairness.bench.ts [--flood 1000] [--sessions 100]
 *
 * Writes bench/fairness/results.json and the "Fairness between tenants" section of bench/RESULTS.md.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gitCommit, machine, numberArg, writeResultsSection } from '../common';
import { AskClient } from '@ask/ask-client';
import { IngestionService, loadDocuments } from '@ask/ingestion';
import { LocalEmbeddingProvider } from '@ask/llm-providers';
import {
  ApiKeysRepository,
  CredentialsCipher,
  InsightsRepository,
  KnowledgeRepository,
  ProjectsRepository,
} from '@ask/persistence';
import { createTestDatabase } from '@ask/persistence/testing';
import { startStack } from '@ask/stack';

const ROOT = resolve(__dirname, '..', '..');
const KB = join(ROOT, 'fixtures', 'data', 'kb-pgvector');
const FLOOD = numberArg('flood', 1_000);
const SESSIONS = numberArg('sessions', 100);
const IDLE_RUNS = 5;
const QUESTION = 'How do I create an HNSW index with pgvector?';
const SECTION = '## Fairness between tenants';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

async function main(): Promise<void> {
  const db = await createTestDatabase();
  const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
  const keys = new ApiKeysRepository(db.dataSource);
  const ingestion = new IngestionService(new KnowledgeRepository(db.dataSource), new InsightsRepository(db.dataSource));
  const docs = await loadDocuments(KB);
  const ids: string[] = [];
  for (const name of ['flooder A', 'tenant B']) {
    const p = await projects.create({
      name,
      llmSettings: { provider: 'local', model: 'local' },
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
      memorySettings: { summaryModel: 'extractive' },
      topK: 6,
    });
    await ingestion.ingest(p.id, docs, new LocalEmbeddingProvider());
    ids.push(p.id);
  }
  const [a, b] = ids;
  const stack = await startStack({
    logDir: join(ROOT, 'tmp', 'bench-fairness'),
    env: {
      DATABASE_URL: db.url,
      ASK_KEY_PREFIX: `bench-fair-${randomUUID()}`,
      ASK_RATE_LIMIT_PER_MINUTE: '1000000',
      LOG_LEVEL: 'warn',
    },
  });
  try {
    const clientA = new AskClient(stack.gatewayUrl, (await keys.create(a, 'bench')).key);
    const clientB = new AskClient(stack.gatewayUrl, (await keys.create(b, 'bench')).key);
    const timeB = async () => {
      const started = performance.now();
      const outcome = await clientB.askAndWait(b, QUESTION);
      if (!outcome.done) throw new Error(`B's ask ended without done: ${JSON.stringify(outcome.error)}`);
      return performance.now() - started;
    };
    await timeB(); // warm-up
    const idle: number[] = [];
    for (let i = 0; i < IDLE_RUNS; i += 1) idle.push(await timeB());
    const idleMs = median(idle);

    const loadStart = loadavg()[0];
    // A's flood: SESSIONS sessions, their asks POSTed in order per session, all sessions at once.
    const perSession = Math.ceil(FLOOD / SESSIONS);
    const posted: Array<{ sessionId: string; askId: string; turn: number }> = [];
    const floodStarted = performance.now();
    await Promise.all(
      Array.from({ length: SESSIONS }, async (_, s) => {
        let sessionId: string | undefined;
        for (let turn = 0; turn < perSession && s * perSession + turn < FLOOD; turn += 1) {
          const accepted = await clientA.ask(a, `${QUESTION} (${s}.${turn})`, sessionId);
          sessionId = accepted.sessionId;
          posted.push({ sessionId, askId: accepted.askId, turn });
        }
      }),
    );
    const floodPostedMs = performance.now() - floodStarted;
    const countA = async () =>
      Number(
        (
          await db.dataSource.query(
            'SELECT count(*)::int AS n FROM ask_session_messages m JOIN ask_sessions s ON s.id = m.session_id WHERE s.project_id = $1',
            [a],
          )
        )[0].n,
      );
    const aDoneAtBPost = await countA();
    const floodMs = await timeB();
    const aDoneAtBDone = await countA();
    const loadEnd = loadavg()[0];
    // Every one of A's asks finishes (or the bench says how many did not).
    const deadline = Date.now() + 20 * 60_000;
    let aDone = await countA();
    while (aDone < posted.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 1_000));
      aDone = await countA();
    }
    const drainedMs = performance.now() - floodStarted;
    const rows: Array<{ session_id: string; ask_id: string }> = await db.dataSource.query(
      'SELECT m.session_id, m.ask_id FROM ask_session_messages m JOIN ask_sessions s ON s.id = m.session_id WHERE s.project_id = $1 ORDER BY m.seq',
      [a],
    );
    const turnOf = new Map(posted.map((p) => [p.askId, p.turn]));
    const bySession = new Map<string, number[]>();
    for (const row of rows)
      bySession.set(row.session_id, [...(bySession.get(row.session_id) ?? []), turnOf.get(row.ask_id) ?? -1]);
    const outOfOrder = [...bySession.values()].filter((turns) =>
      turns.some((t, i) => i > 0 && t < turns[i - 1]),
    ).length;

    const results = {
      command: `node tools/run-ts.js bench/fairness/fairness.bench.ts --flood ${FLOOD} --sessions ${SESSIONS}`,
      date: new Date().toISOString(),
      commit: gitCommit(),
      machine: machine(),
      flood: FLOOD,
      sessions: SESSIONS,
      idleMs: idle.map((x) => round(x)),
      idleMedianMs: round(idleMs),
      floodMs: round(floodMs),
      ratio: round(floodMs / idleMs, 2),
      floodPostedMs: round(floodPostedMs),
      aDoneAtBPost,
      aDoneAtBDone,
      aStored: aDone,
      aPosted: posted.length,
      aDrainedMs: round(drainedMs),
      aSessionsOutOfOrder: outOfOrder,
      loadAverage1m: { start: round(loadStart, 2), end: round(loadEnd, 2) },
    };
    mkdirSync(join(ROOT, 'bench', 'fairness'), { recursive: true });
    writeFileSync(join(ROOT, 'bench', 'fairness', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    const m = results.machine;
    writeResultsSection(
      SECTION,
      `${SECTION}

Project B's single ask, POST → \`done\`, idle (median of ${IDLE_RUNS}) and while project A floods the queues with ${FLOOD} asks in ${SESSIONS} sessions (rate limit raised to 1,000,000/min; B POSTs once all of A's are accepted). Four processes, local providers, default concurrency (8 retrieval, 8 synthesis), fair shares on (FairShare: BullMQ priorities by start-time fair queuing; SYNTHESIS_PROJECT_MAX_RUNNING=6). Before (strict FIFO, issue 27's run): 1,000 asks → 16.2 s against 354 ms idle, **45.7×**, B behind 760 of A's jobs.

\`${results.command}\` · ${results.date} · commit ${results.commit} · ${m.nproc} CPUs (${m.cpuModel}), Node ${m.node} · load average (1 min) ${results.loadAverage1m.start} at the flood's start, ${results.loadAverage1m.end} when B's ask was done. Raw: \`bench/fairness/results.json\`.

| Figure | Value |
|---|---:|
| B idle: POST → \`done\`, median of ${IDLE_RUNS} (ms) | ${results.idleMedianMs} |
| B under A's flood: POST → \`done\` (ms) | ${results.floodMs} |
| Ratio flood / idle | **${results.ratio}×** |
| A's asks stored when B POSTed / when B was done (of ${results.aPosted}) | ${aDoneAtBPost} / ${aDoneAtBDone} |
| A's asks stored in the end / posted | ${results.aStored} / ${results.aPosted} |
| A's sessions whose rows are not in POST order | ${outOfOrder} of ${SESSIONS} |
| A's flood: all POSTed in / all done in (ms) | ${results.floodPostedMs} / ${results.aDrainedMs} |
`,
    );
    console.log(JSON.stringify(results, null, 2));
  } finally {
    await stack.stop(5_000).catch(() => undefined);
    await db.drop().catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
