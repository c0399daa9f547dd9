/**
 * Load run (no ask lost and memory flat under many sessions): `--sessions` concurrent client sessions for `--seconds` against the three apps
 * as separate processes on loopback, with the embedded local providers, on a throwaway database on
 * the local PostgreSQL and a key prefix of its own on the local Redis.
 *
 *   node tools/run-ts.js bench/load/load.bench.ts [--sessions 200] [--seconds 60] [--chunk-delay-ms 0]
 *   node tools/run-ts.js bench/load/load.bench.ts --long [--seconds 180]     # memory over time
 *
 * Each session asks a question, follows its SSE stream to `done` or `error` (reconnecting with
 * Last-Event-ID if the stream drops), then asks the next, in sessions of up to 5 turns. After the
 * time is up no new ask starts and the ones in flight are followed to their end (at most 120 s).
 * Reports: lost asks (accepted, never ended), 5xx answers, outcomes by code, asks/s, latency
 * (POST → terminal event) median/p95, and each app's RSS (/proc/<pid>/status VmRSS) sampled every
 * 5 s. A benchmark, not a test: it asserts nothing. Writes bench/load/results.json and its own
 * section of bench/RESULTS.md (other sections are left as they are). `--long` (default 180 s) is the
 * memory-over-time run: it writes bench/load/results-long.json and the "Load run, long mode" section
 * instead, with each app's start, peak, end and least-squares RSS trend during the load, and the RSS
 * every 15 s.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gitCommit, machine, numberArg, percentile, repoRelative, writeResultsSection } from '../common';
import { AskApiError, AskClient, type AskOutcome, applyEvent } from '@ask/ask-client';
import { IngestionService, loadDocuments } from '@ask/ingestion';
import { LocalEmbeddingProvider } from '@ask/llm-providers';
import {
  ApiKeysRepository,
  CredentialsCipher,
  InsightsRepository,
  KnowledgeRepository,
  ProjectsRepository,
} from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { type AppName, APPS, startStack, type Stack } from '@ask/stack';
import { removeTestKeys } from '@ask/testing';

const ROOT = resolve(__dirname, '..', '..');
/** pgvector's README and CHANGELOG, committed in fixtures/data (the bench needs no ../shared). */
const KB = join(ROOT, 'fixtures', 'data', 'kb-pgvector');
const LONG = process.argv.includes('--long');
const SECTION = LONG ? '## Load run, long mode (memory over time)' : '## Load run (200 sessions, 60 s)';
const RESULTS_FILE = LONG ? 'results-long.json' : 'results.json';
/** The long mode's table shows every third 5 s sample. */
const LONG_TABLE_EVERY_S = 15;
const MAX_TURNS = 5;
const DRAIN_MS = 120_000;
const SAMPLE_EVERY_MS = 5_000;

const QUESTIONS = [
  'How do I create an HNSW index with pgvector?',
  'Which distance functions can an index use?',
  'How do I tune ef_search for better recall?',
  'What is the difference between IVFFlat and HNSW indexes?',
  'How do I store half-precision vectors?',
  'How many dimensions can a vector column have?',
  'How do I filter rows while doing an approximate nearest neighbour search?',
  'What changed in the latest release?',
];

const SESSIONS = numberArg('sessions', 200, 0);
const SECONDS = numberArg('seconds', LONG ? 180 : 60, 0);
const CHUNK_DELAY_MS = numberArg('chunk-delay-ms', 0, 0);

/** One ask as the client saw it. */
interface AskRecord {
  /** HTTP status of the POST (202 when accepted), or 0 for a network error. */
  postStatus: number;
  postCode?: string;
  accepted: boolean;
  /** `done`, `error <status> <code>`, or `lost` (accepted, no terminal event by the end of the drain). */
  outcome: string;
  ms: number;
  /** Non-2xx statuses of the events route. */
  eventStatuses: number[];
  reconnects: number;
}

function rssKiB(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** Follows an accepted ask to its terminal event, reconnecting with Last-Event-ID until `until`. */
async function followAsk(client: AskClient, askId: string, until: number, record: AskRecord): Promise<AskOutcome> {
  const outcome: AskOutcome = { askId, sessionId: '', answer: '', events: [] };
  let lastEventId: string | undefined;
  for (let connection = 0; Date.now() < until && connection < 50; connection += 1) {
    if (connection > 0) record.reconnects += 1;
    try {
      for await (const event of client.events(askId, {
        lastEventId,
        signal: AbortSignal.timeout(Math.max(1, until - Date.now())),
      })) {
        lastEventId = event.id;
        applyEvent(outcome, event);
      }
    } catch (err) {
      if (err instanceof AskApiError) record.eventStatuses.push(err.status);
    }
    if (outcome.done || outcome.error) return outcome;
    await new Promise((r) => setTimeout(r, 200));
  }
  return outcome;
}

async function runSession(
  client: AskClient,
  projectId: string,
  index: number,
  stopAt: number,
  records: AskRecord[],
): Promise<void> {
  let sessionId: string | undefined;
  let turn = 0;
  for (let n = 0; Date.now() < stopAt; n += 1) {
    const question = QUESTIONS[(index + n) % QUESTIONS.length];
    const record: AskRecord = {
      postStatus: 0,
      accepted: false,
      outcome: 'not accepted',
      ms: 0,
      eventStatuses: [],
      reconnects: 0,
    };
    records.push(record);
    const started = performance.now();
    try {
      const accepted = await client.ask(projectId, question, sessionId);
      record.postStatus = 202;
      record.accepted = true;
      sessionId = accepted.sessionId;
      const outcome = await followAsk(client, accepted.askId, stopAt + DRAIN_MS, record);
      record.outcome = outcome.done
        ? 'done'
        : outcome.error
          ? `error ${outcome.error.status} ${outcome.error.code}`
          : 'lost';
    } catch (err) {
      if (err instanceof AskApiError) {
        record.postStatus = err.status;
        record.postCode = err.body.code;
      }
      record.outcome = `rejected ${record.postStatus}${record.postCode ? ` ${record.postCode}` : ''}`;
      await new Promise((r) => setTimeout(r, 250));
    }
    record.ms = performance.now() - started;
    turn = (turn + 1) % MAX_TURNS;
    if (turn === 0) sessionId = undefined;
  }
}

/** One RSS sample: seconds since the load started, phase, each app's RSS (MiB) and asks done so far. */
interface Sample {
  atS: number;
  phase: string;
  rssMiB: Record<AppName, number | null>;
  asksDone: number;
}

/** Least-squares slope of y over x (per unit of x); NaN with fewer than two points. */
function slope(points: Array<[number, number]>): number {
  if (points.length < 2) return NaN;
  const mx = points.reduce((s, [x]) => s + x, 0) / points.length;
  const my = points.reduce((s, [, y]) => s + y, 0) / points.length;
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  return sxx === 0 ? NaN : sxy / sxx;
}

/**
 * The long mode's section of bench/RESULTS.md, every figure from `results` and `samples`: the run's
 * conditions, its summary, each app's start / peak (and when) / lowest after the peak / end / idle RSS
 * and its least-squares RSS trend over the load phase in MiB per minute, and the RSS every 15 s.
 */
function longSection(
  results: { date: string; command: string; commit: string; machine: ReturnType<typeof machine> },
  samples: Sample[],
  summary: {
    asksSent: number;
    asksAccepted: number;
    lostAsks: number;
    fiveXx: number;
    asksPerSecond: number;
    wallSeconds: number;
    latencyMs: { median: number; p95: number };
    loadAverage1m: { start: number; end: number };
  },
): string {
  const m = results.machine;
  const load = samples.filter((s) => s.phase === 'load' || s.phase === 'start');
  const rows = APPS.map((name) => {
    const series = samples
      .filter((s) => s.rssMiB[name] !== null)
      .map((s) => ({ at: s.atS, mib: s.rssMiB[name] as number }));
    const peak = series.reduce((a, b) => (b.mib > a.mib ? b : a), series[0]);
    const afterPeak = series.filter((s) => s.at >= peak.at);
    const low = afterPeak.reduce((a, b) => (b.mib < a.mib ? b : a), afterPeak[0]);
    const trend = slope(load.filter((s) => s.rssMiB[name] !== null).map((s) => [s.atS / 60, s.rssMiB[name] as number]));
    const end = samples.find((s) => s.phase === 'end')?.rssMiB[name];
    const idle = samples[samples.length - 1].rssMiB[name];
    return `| ${name} | ${series[0].mib} | ${peak.mib} at ${peak.at} s | ${low.mib} at ${low.at} s | ${end ?? '–'} | ${idle ?? '–'} | ${Number.isNaN(trend) ? '–' : trend.toFixed(1)} |`;
  });
  // samples[0] is the start; then one every SAMPLE_EVERY_MS, so every third one is 15 s apart.
  const every = Math.round((LONG_TABLE_EVERY_S * 1000) / SAMPLE_EVERY_MS);
  const table = samples.filter((s, i) => i % every === 0 || s.phase === 'end' || s.phase.startsWith('idle'));
  return `${SECTION}

\`${results.command}\` · ${results.date} · commit ${results.commit} · ${m.nproc} CPUs (${m.cpuModel}), ${m.totalMemoryGiB} GiB, Node ${m.node} · ${SESSIONS} sessions for ${SECONDS} s${SECONDS === 180 ? '' : " (the mode's default is 180 s; this run was shorter)"} · 1-min load average ${summary.loadAverage1m.start} at the start, ${summary.loadAverage1m.end} at the end (other work shares the machine when it is above ${m.nproc}) · same setup as the 60 s run. Raw figures and every 5 s sample: \`bench/load/${RESULTS_FILE}\`.

${summary.asksSent} asks sent, ${summary.asksAccepted} accepted, ${summary.lostAsks} lost, ${summary.fiveXx} 5xx, ${summary.asksPerSecond} asks/s over ${summary.wallSeconds} s, latency POST → done median ${summary.latencyMs.median} ms / p95 ${summary.latencyMs.p95} ms.

RSS (MiB, VmRSS); trend = least-squares slope of RSS over the load phase's samples, MiB per minute:

| process | start | peak | lowest after the peak | end | idle +10 s | trend (MiB/min) |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
${rows.join('\n')}

| s | phase | asks done | ${APPS.join(' | ')} |
| ---: | --- | ---: | ${APPS.map(() => '---:').join(' | ')} |
${table.map((s) => `| ${Math.round(s.atS)} | ${s.phase} | ${s.asksDone} | ${APPS.map((name) => s.rssMiB[name] ?? '–').join(' | ')} |`).join('\n')}
`;
}

const mib = (kib: number | null) => (kib === null ? null : Math.round((kib / 1024) * 10) / 10);

async function main(): Promise<void> {
  const command = `node tools/run-ts.js bench/load/load.bench.ts${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(' ')}` : ''}`;
  let db: TestDatabase | undefined;
  let stack: Stack | undefined;
  try {
    console.log('creating a throwaway database and ingesting the knowledge base…');
    db = await createTestDatabase();
    const encryptionKey = randomBytes(32).toString('hex');
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(encryptionKey));
    const project = await projects.create({
      name: 'load',
      llmSettings: { provider: 'local', model: 'local' },
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
      topK: 6,
    });
    const ingestion = new IngestionService(
      new KnowledgeRepository(db.dataSource),
      new InsightsRepository(db.dataSource),
    );
    await ingestion.ingest(project.id, await loadDocuments(KB), new LocalEmbeddingProvider());
    const apiKey = (await new ApiKeysRepository(db.dataSource).create(project.id, 'load run')).key;
    const env = {
      DATABASE_URL: db.url,
      ASK_KEY_PREFIX: `load-${randomUUID()}`,
      ASK_ENCRYPTION_KEY: encryptionKey,
      ASK_RATE_LIMIT_PER_MINUTE: '1000000',
      LOCAL_LLM_CHUNK_DELAY_MS: String(CHUNK_DELAY_MS),
      RETRIEVAL_CONCURRENCY: '16',
      SYNTHESIS_CONCURRENCY: '16',
      LOG_LEVEL: 'warn',
    };
    console.log('starting the stack…');
    stack = await startStack({ env, logDir: join(ROOT, 'tmp', 'load-logs') });
    const client = new AskClient(stack.gatewayUrl, apiKey);
    // Warm-up: a few asks so every process has compiled its paths before the first sample.
    for (const question of QUESTIONS.slice(0, 3)) await client.askAndWait(project.id, question);
    await new Promise((r) => setTimeout(r, 2_000));

    const pids = Object.fromEntries(APPS.map((name) => [name, stack!.apps[name].child.pid])) as Record<
      AppName,
      number | undefined
    >;
    const samples: Sample[] = [];
    const records: AskRecord[] = [];
    const sample = (phase: string) =>
      samples.push({
        atS: Math.round((performance.now() - t0) / 100) / 10,
        phase,
        rssMiB: Object.fromEntries(APPS.map((name) => [name, mib(rssKiB(pids[name]))])) as Record<
          AppName,
          number | null
        >,
        asksDone: records.filter((r) => r.outcome === 'done').length,
      });
    const t0 = performance.now();
    sample('start');
    const load1 = loadavg()[0];
    const stopAt = Date.now() + SECONDS * 1000;
    const sampler = setInterval(() => sample(Date.now() < stopAt ? 'load' : 'drain'), SAMPLE_EVERY_MS);
    console.log(`running ${SESSIONS} sessions for ${SECONDS} s…`);
    await Promise.all(Array.from({ length: SESSIONS }, (_, i) => runSession(client, project.id, i, stopAt, records)));
    const wallS = (performance.now() - t0) / 1000;
    clearInterval(sampler);
    sample('end');
    const loadEnd = loadavg()[0];
    await new Promise((r) => setTimeout(r, 10_000));
    sample('idle +10 s');

    const accepted = records.filter((r) => r.accepted);
    const outcomes: Record<string, number> = {};
    for (const r of records) outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
    const done = records.filter((r) => r.outcome === 'done');
    const latencies = done.map((r) => r.ms).sort((a, b) => a - b);
    const round = (n: number) => Math.round(n * 10) / 10;
    const fiveXx =
      records.filter((r) => r.postStatus >= 500).length +
      records.reduce((n, r) => n + r.eventStatuses.filter((s) => s >= 500).length, 0);
    const mid = samples.filter((s) => s.phase === 'load')[
      Math.floor(samples.filter((s) => s.phase === 'load').length / 2)
    ];
    const first = samples[0];
    const end = samples.find((s) => s.phase === 'end')!;
    const idle = samples[samples.length - 1];
    const summary = {
      sessions: SESSIONS,
      seconds: SECONDS,
      wallSeconds: round(wallS),
      asksSent: records.length,
      asksAccepted: accepted.length,
      lostAsks: records.filter((r) => r.outcome === 'lost').length,
      fiveXx,
      outcomes,
      reconnects: records.reduce((n, r) => n + r.reconnects, 0),
      asksPerSecond: round(done.length / wallS),
      latencyMs: {
        median: round(percentile(latencies, 50)),
        p95: round(percentile(latencies, 95)),
        max: round(latencies[latencies.length - 1] ?? NaN),
      },
      rssMiB: { start: first.rssMiB, middle: mid?.rssMiB ?? null, end: end.rssMiB, idleAfter10s: idle.rssMiB },
      loadAverage1m: { start: round(load1), end: round(loadEnd) },
    };
    console.log(JSON.stringify(summary, null, 2));

    const results = {
      benchmark: 'load run (local providers)',
      date: new Date().toISOString(),
      command,
      commit: gitCommit(),
      machine: machine(),
      setup: {
        processes:
          'api-gateway, retrieval-worker, synthesis-worker as separate Node processes (tools/stack), loopback HTTP + SSE',
        env: {
          ...env,
          DATABASE_URL: '<throwaway database on the local PostgreSQL>',
          ASK_KEY_PREFIX: 'load-<uuid>',
          ASK_ENCRYPTION_KEY: '<random>',
        },
        project: {
          llm: 'local/local',
          embedding: 'local/local-lexical-v1 (256 dims)',
          topK: 6,
          knowledge: repoRelative(KB),
        },
        client: `each session: POST ask, follow SSE to done/error (Last-Event-ID reconnects), next question; sessions of up to ${MAX_TURNS} turns; after ${SECONDS} s no new ask, in-flight ones followed up to ${DRAIN_MS / 1000} s`,
        timing: 'client side, from just before POST /api/v1/projects/:id/ask to the terminal SSE event',
      },
      summary,
      samples,
    };
    mkdirSync(join(ROOT, 'bench', 'load'), { recursive: true });
    writeFileSync(join(ROOT, 'bench', 'load', RESULTS_FILE), `${JSON.stringify(results, null, 2)}\n`);
    if (LONG) {
      writeResultsSection(SECTION, longSection(results, samples, summary));
      console.log(`wrote bench/load/${RESULTS_FILE} and the "${SECTION.slice(3)}" section of bench/RESULTS.md`);
      return;
    }

    const rssRow = (name: AppName) =>
      `| ${name} | ${first.rssMiB[name]} | ${mid?.rssMiB[name] ?? '–'} | ${end.rssMiB[name]} | ${idle.rssMiB[name]} |`;
    const m = results.machine;
    writeResultsSection(
      SECTION,
      `${SECTION}

\`${command}\` · ${results.date.slice(0, 10)} · commit ${results.commit} · ${m.nproc} CPUs (${m.cpuModel}), ${m.totalMemoryGiB} GiB, Node ${m.node} · the three apps as separate processes on loopback, local providers (chunk delay ${CHUNK_DELAY_MS} ms), concurrency 16 per worker, throwaway database. Raw figures and 5 s RSS samples: \`bench/load/results.json\`.

| figure | value |
| --- | --- |
| asks sent / accepted | ${summary.asksSent} / ${summary.asksAccepted} |
| lost asks (accepted, no done or error) | ${summary.lostAsks} |
| 5xx answers (POST + events) | ${summary.fiveXx} |
| outcomes | ${Object.entries(outcomes)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')} |
| SSE reconnects | ${summary.reconnects} |
| asks/s (done ÷ wall ${summary.wallSeconds} s) | ${summary.asksPerSecond} |
| latency POST → done, median / p95 / max | ${summary.latencyMs.median} / ${summary.latencyMs.p95} / ${summary.latencyMs.max} ms |
| 1-min load average, start / end | ${summary.loadAverage1m.start} / ${summary.loadAverage1m.end} |

RSS (MiB, VmRSS):

| process | start | middle | end | idle +10 s |
| --- | --- | --- | --- | --- |
${APPS.map(rssRow).join('\n')}
`,
    );
    console.log(`wrote bench/load/${RESULTS_FILE} and the "${SECTION.slice(3)}" section of bench/RESULTS.md`);
  } finally {
    await stack?.stop(10_000);
    if (stack)
      await removeTestKeys(stack.env).catch((err) =>
        console.error(`removing its Redis keys: ${(err as Error).message}`),
      );
    await db?.drop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
