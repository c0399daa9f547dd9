/**
 * Fair shares between tenants (one tenant never moves another): project B's single ask, POST → `done`, idle and (1) while
 * project A floods the queues with `--flood` asks (default 1,000; the rate limit raised, as an
 * operator or one customer's many projects could), (2) while another project's `--slow` asks
 * (default 20, within the default rate limit) stream from a provider that takes `--slow-s` seconds
 * per answer (default 20; tools/fake-upstream). Each as a ratio to idle in one run, with the load
 * average, once with ASK_FAIR_SHARES=off (strict FIFO, as before) and once on, back to back. Also:
 * how many of A's asks had finished when B's did, that every one of A's asks finished with one stored
 * row, and how far A's asks were stored from their POST order. Four processes (tools/stack), local
 * providers for A and B, default concurrency, a throwaway database on the shared PostgreSQL and a
 * unique key prefix on the shared Redis.
 *
 *   node tools/run-ts.js bench/fairness/fairness.bench.ts [--flood 1000] [--sessions 100] [--slow 20] [--slow-s 20]
 *
 * Writes bench/fairness/results.json and the "Fairness between tenants" section of bench/RESULTS.md.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gitCommit, machine, numberArg, writeResultsSection } from '../common';
import { AskClient } from '@ask/ask-client';
import { startFakeUpstream } from '@ask/fake-upstream';
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
import { removeTestKeys } from '@ask/testing';

const ROOT = resolve(__dirname, '..', '..');
const KB = join(ROOT, 'fixtures', 'data', 'kb-pgvector');
const FLOOD = numberArg('flood', 1_000);
const SESSIONS = numberArg('sessions', 100);
const SLOW = numberArg('slow', 20);
const SLOW_S = numberArg('slow-s', 20);
const IDLE_RUNS = 5;
const QUESTION = 'How do I create an HNSW index with pgvector?';
const SECTION = '## Fairness between tenants';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

type Mode = 'off' | 'on';

/** One mode's figures (ASK_FAIR_SHARES=`mode`). */
interface ModeResults {
  mode: Mode;
  idleMs: number[];
  idleMedianMs: number;
  flood: {
    bMs: number;
    ratio: number;
    postedMs: number;
    aDoneAtBPost: number;
    aDoneAtBDone: number;
    aStored: number;
    aPosted: number;
    drainedMs: number;
    /** A's asks stored more than 16 places (the slots of one retrieval and one synthesis worker) from their POST rank. */
    aDisplaced: number;
    load: { start: number; end: number };
  };
  slow: {
    bMs: number;
    ratio: number;
    aDoneAtBDone: number;
    aStored: number;
    load: { start: number; end: number };
  };
}

async function main(): Promise<void> {
  const db = await createTestDatabase();
  const encryptionKey = randomBytes(32).toString('hex');
  const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(encryptionKey));
  const keys = new ApiKeysRepository(db.dataSource);
  const ingestion = new IngestionService(new KnowledgeRepository(db.dataSource), new InsightsRepository(db.dataSource));
  const docs = await loadDocuments(KB);
  const upstream = await startFakeUpstream({
    chunkDelayMs: 1_000,
    answerChunks: Array.from({ length: SLOW_S }, (_, i) => `part ${i} of a slow answer. `),
  });
  const project = async (name: string, llm: Record<string, string>) => {
    const p = await projects.create({
      name,
      llmSettings: llm as never,
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
      memorySettings: { summaryModel: 'extractive' },
      topK: 6,
    });
    await ingestion.ingest(p.id, docs, new LocalEmbeddingProvider());
    return p.id;
  };
  const rowsOf = async (projectId: string): Promise<Array<{ ask_id: string }>> =>
    db.dataSource.query(
      'SELECT m.ask_id FROM ask_session_messages m JOIN ask_sessions s ON s.id = m.session_id WHERE s.project_id = $1 ORDER BY m.seq',
      [projectId],
    );
  const countOf = async (projectId: string) => (await rowsOf(projectId)).length;

  const runMode = async (mode: Mode): Promise<ModeResults> => {
    const local = { provider: 'local', model: 'local' };
    const a = await project(`flooder A (${mode})`, local);
    const b = await project(`tenant B (${mode})`, local);
    const slowA = await project(`slow provider A (${mode})`, {
      provider: 'openai',
      model: 'gpt-4o',
      baseUrl: `${upstream.url}/v1`,
    });
    await projects.setCredentials(slowA, { apiKey: 'sk-bench-fairness' } as never);
    const stack = await startStack({
      // The machine is shared: a loaded one needs longer than the default 60 s to boot four apps.
      timeoutMs: 240_000,
      logDir: join(ROOT, 'tmp', `bench-fairness-${mode}`),
      env: {
        DATABASE_URL: db.url,
        ASK_KEY_PREFIX: `bench-fair-${randomUUID()}`,
        ASK_ENCRYPTION_KEY: encryptionKey,
        ASK_PROVIDER_URL_ALLOWLIST: upstream.url,
        ASK_RATE_LIMIT_PER_MINUTE: '1000000',
        ASK_FAIR_SHARES: mode,
        LOG_LEVEL: 'warn',
      },
    });
    try {
      const clientA = new AskClient(stack.gatewayUrl, (await keys.create(a, 'bench')).key);
      const clientB = new AskClient(stack.gatewayUrl, (await keys.create(b, 'bench')).key);
      const clientSlow = new AskClient(stack.gatewayUrl, (await keys.create(slowA, 'bench')).key);
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

      // (1) A's flood: SESSIONS sessions, their asks POSTed in order per session, all sessions at once.
      const floodLoadStart = loadavg()[0];
      const perSession = Math.ceil(FLOOD / SESSIONS);
      const posted: string[] = [];
      const floodStarted = performance.now();
      await Promise.all(
        Array.from({ length: SESSIONS }, async (_, session) => {
          let sessionId: string | undefined;
          for (let turn = 0; turn < perSession && session * perSession + turn < FLOOD; turn += 1) {
            const accepted = await clientA.ask(a, `${QUESTION} (${session}.${turn})`, sessionId);
            sessionId = accepted.sessionId;
            posted.push(accepted.askId);
          }
        }),
      );
      const postedMs = performance.now() - floodStarted;
      const aDoneAtBPost = await countOf(a);
      const floodB = await timeB();
      const aDoneAtBDone = await countOf(a);
      const floodLoadEnd = loadavg()[0];
      // Until every one of A's asks is stored, or none more is for 20 s (the rest ended at their deadline).
      let last = await countOf(a);
      let lastChange = Date.now();
      while (last < posted.length && Date.now() - lastChange < 20_000) {
        await new Promise((r) => setTimeout(r, 1_000));
        const now = await countOf(a);
        if (now !== last) [last, lastChange] = [now, Date.now()];
      }
      const drainedMs = performance.now() - floodStarted;
      const stored = (await rowsOf(a)).map((r) => r.ask_id);
      const postRank = new Map(posted.map((id, i) => [id, i]));
      const aDisplaced = stored.filter((id, i) => Math.abs((postRank.get(id) ?? -1e9) - i) > 16).length;

      // (2) Slow provider: SLOW asks of slowA hold the synthesis slots (each SLOW_S s), then B asks.
      const slowLoadStart = loadavg()[0];
      const slowAsks = await Promise.all(
        Array.from({ length: SLOW }, (_, i) => clientSlow.ask(slowA, `${QUESTION} (slow ${i})`)),
      );
      const slowPosted = Date.now();
      await new Promise((r) => setTimeout(r, 3_000)); // the slow asks reach synthesis and hold its slots
      const slowB = await timeB();
      const slowADoneAtBDone = await countOf(slowA);
      const slowLoadEnd = loadavg()[0];
      // Every slow ask is stored, or has passed its deadline (ASK_DEADLINE_MS, 120 s) and ended in error.
      while ((await countOf(slowA)) < slowAsks.length && Date.now() - slowPosted < 140_000)
        await new Promise((r) => setTimeout(r, 1_000));
      return {
        mode,
        idleMs: idle.map((x) => round(x)),
        idleMedianMs: round(idleMs),
        flood: {
          bMs: round(floodB),
          ratio: round(floodB / idleMs, 2),
          postedMs: round(postedMs),
          aDoneAtBPost,
          aDoneAtBDone,
          aStored: stored.length,
          aPosted: posted.length,
          drainedMs: round(drainedMs),
          aDisplaced,
          load: { start: round(floodLoadStart, 2), end: round(floodLoadEnd, 2) },
        },
        slow: {
          bMs: round(slowB),
          ratio: round(slowB / idleMs, 2),
          aDoneAtBDone: slowADoneAtBDone,
          aStored: await countOf(slowA),
          load: { start: round(slowLoadStart, 2), end: round(slowLoadEnd, 2) },
        },
      };
    } finally {
      await stack.stop(5_000).catch(() => undefined);
      await removeTestKeys(stack.env).catch((err) =>
        console.error(`removing its Redis keys: ${(err as Error).message}`),
      );
    }
  };

  try {
    const modes = [await runMode('off'), await runMode('on')];
    const results = {
      command: `node tools/run-ts.js bench/fairness/fairness.bench.ts --flood ${FLOOD} --sessions ${SESSIONS} --slow ${SLOW} --slow-s ${SLOW_S}`,
      date: new Date().toISOString(),
      commit: gitCommit(),
      machine: machine(),
      flood: FLOOD,
      sessions: SESSIONS,
      slow: SLOW,
      slowSeconds: SLOW_S,
      modes,
    };
    mkdirSync(join(ROOT, 'bench', 'fairness'), { recursive: true });
    writeFileSync(join(ROOT, 'bench', 'fairness', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
    const m = results.machine;
    const [off, on] = modes;
    const row = (label: string, f: (r: ModeResults) => string | number) => `| ${label} | ${f(off)} | ${f(on)} |`;
    writeResultsSection(
      SECTION,
      `${SECTION}

Project B's single ask, POST → \`done\`, idle (median of ${IDLE_RUNS}) and under two kinds of pressure from other projects, with fair shares off (\`ASK_FAIR_SHARES=off\`: strict FIFO, as before) and on (default: BullMQ priorities by start-time fair queuing, \`SYNTHESIS_PROJECT_MAX_RUNNING=6\`), back to back in one run. Flood: project A POSTs ${FLOOD} asks in ${SESSIONS} sessions (rate limit raised to 1,000,000/min), then B asks. Slow provider: another project's ${SLOW} asks (within the default limit) stream from tools/fake-upstream at ${SLOW_S} s per answer; B asks 3 s later. Four processes, default concurrency (8 retrieval, 8 synthesis), local providers for A and B. Issue 27's run before this change: 1,000 asks → 16.2 s against 354 ms idle, 45.7×; slow provider → 120 s.

\`${results.command}\` · ${results.date} · commit ${results.commit} · ${m.nproc} CPUs (${m.cpuModel}), Node ${m.node}. The machine is shared: the 1-min load average is given per phase (above ${m.nproc}, other work competes for the CPU, and a CPU-bound flood slows B's own processing whatever the order). Raw: \`bench/fairness/results.json\`.

| Figure | Fair shares off (FIFO) | On |
|---|---:|---:|
${row('B idle: POST → `done`, median (ms)', (r) => r.idleMedianMs)}
${row(`B under A's flood of ${FLOOD}: POST → \`done\` (ms)`, (r) => r.flood.bMs)}
${row('Flood: ratio to idle', (r) => `**${r.flood.ratio}×**`)}
${row(`Flood: A's asks stored when B POSTed / when B was done (of ${FLOOD})`, (r) => `${r.flood.aDoneAtBPost} / ${r.flood.aDoneAtBDone}`)}
${row("Flood: A's asks stored in the end / posted", (r) => `${r.flood.aStored} / ${r.flood.aPosted}`)}
${row("Flood: A's asks stored more than 16 places from their POST order", (r) => r.flood.aDisplaced)}
${row('Flood: all POSTed in / all stored in (ms)', (r) => `${r.flood.postedMs} / ${r.flood.drainedMs}`)}
${row('Flood: load average at start / when B was done', (r) => `${r.flood.load.start} / ${r.flood.load.end}`)}
${row(`B while ${SLOW} slow-provider asks run: POST → \`done\` (ms)`, (r) => r.slow.bMs)}
${row('Slow provider: ratio to idle', (r) => `**${r.slow.ratio}×**`)}
${row(`Slow provider: their asks stored when B was done / in the end (of ${SLOW})`, (r) => `${r.slow.aDoneAtBDone} / ${r.slow.aStored}`)}
${row('Slow provider: load average at start / when B was done', (r) => `${r.slow.load.start} / ${r.slow.load.end}`)}
`,
    );
    console.log(JSON.stringify(results, null, 2));
  } finally {
    await upstream.close().catch(() => undefined);
    await db.drop().catch(() => undefined);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
