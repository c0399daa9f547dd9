/**
 * Hostile-input bench (work per request bounded by its size): the four apps as separate processes on loopback (local
 * providers, a throwaway database, a key prefix of its own on the local Redis). While a probe session
 * streams answers without a pause, one attacker project sends each hostile input of the issue and the
 * worst found since (long runs without a space in every script as questions, 8,000-character CJK,
 * emoji and ASCII system prompts, a 12 KB two-word, a 1 MB base64, a 1 MB single-run Latin, a 1 MB
 * single-run CJK and a 2 MB two-word document), one at a time, each followed to its end; meanwhile
 * one gateway holds `--clients` (default 5,000) idle SSE clients over 5 projects (1,000 each, the
 * default per-project cap).
 *
 *   node tools/run-ts.js bench/hostile/hostile.bench.ts [--clients 5000] [--ramp-per-s 200] [--opening 50]
 *
 * Records, per input and per phase: each process's event-loop delay (prom-client's
 * `monitorEventLoopDelay` gauges on its /metrics, reset by each scrape: p99 and max over the window),
 * the probe's longest gap between two deltas of one answer (and its longest wait from the POST to the
 * first delta), the gateway's TCP connections to Redis (its sockets, whatever their names) and its RSS
 * per 1,000 idle clients. Counting throughput (cold and warm, against tiktoken) is
 * bench/counting/throughput.bench.ts. Goals (the issue's): max event-loop delay ≤ 100 ms in every
 * process, probe gap ≤ 250 ms, ≤ 8 Redis connections held by the gateway with 5,000 clients.
 * A benchmark, not a test: it asserts nothing. Writes bench/hostile/results.json and its own section
 * of bench/RESULTS.md.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { BENCH_ROOT, gitCommit, machine, numberArg, writeResultsSection } from '../common';
import { AskApiError, AskClient } from '@ask/ask-client';
import { AskEventStream } from '@ask/event-stream';
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
import {
  connectionsTo,
  type IdleClient,
  type LoopDelay,
  openIdleClient,
  rssMiB,
  schedStat,
  scrapeLoopDelay,
} from './measure';

/** One window of one process: its event-loop delay, and its main thread's CPU time and run-queue wait (ms). */
interface Window extends LoopDelay {
  cpuMs?: number;
  waitMs?: number;
}

const ROOT = BENCH_ROOT;
const SECTION = '## Hostile inputs (bounded cost, issue 10)';
const KB = join(ROOT, 'fixtures', 'data', 'kb-pgvector');
const CLIENTS = numberArg('clients', 5_000, 0);
const RAMP_PER_S = numberArg('ramp-per-s', 200);
/** Idle streams opened but not yet answered, at most (the ramp waits below it). */
const OPENING = numberArg('opening', 50);
const IDLE_PROJECTS = Math.max(1, Math.ceil(CLIENTS / 1_000));
const REDIS_PORT = Number(new URL(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379').port || 6379);
const GOALS = { loopMaxMs: 100, probeGapMs: 250, redisConnections: 8 };
const PROBE_QUESTIONS = [
  'How do I create an HNSW index with pgvector?',
  'Which distance functions can an index use?',
  'How do I tune ef_search for better recall?',
  'What is the difference between IVFFlat and HNSW indexes?',
];
const ORDINARY_QUESTION = 'How do I create an HNSW index with pgvector?';

/** `unit` repeated to `length` UTF-16 code units (never cutting a unit). */
const repeatTo = (unit: string, length: number) => unit.repeat(Math.floor(length / unit.length));

/** One hostile input: how it is sent and what it is. */
interface HostileInput {
  name: string;
  kind: 'question' | 'system prompt' | 'document';
  text: string;
}

function hostileInputs(): HostileInput[] {
  const q = (name: string, text: string): HostileInput => ({ name, kind: 'question', text });
  const base64 = randomBytes(750_000).toString('base64');
  return [
    q('🧪 × 3,000 (6,000 UTF-16)', '🧪'.repeat(3_000)),
    q('a × 8,000', 'a'.repeat(8_000)),
    q('规 × 8,000 (CJK)', '规'.repeat(8_000)),
    q('ก × 8,000 (Thai)', 'ก'.repeat(8_000)),
    q('한 × 8,000 (Hangul)', '한'.repeat(8_000)),
    q('я × 8,000 (Cyrillic)', 'я'.repeat(8_000)),
    q('ع × 8,000 (Arabic)', 'ع'.repeat(8_000)),
    q('हि × 4,000 (Devanagari with a mark)', 'हि'.repeat(4_000)),
    q('e + U+0301 × 4,000 (combining marks)', 'e\u0301'.repeat(4_000)),
    q('👨‍👩‍👧 ZWJ families to 8,000', repeatTo('👨‍👩‍👧', 8_000)),
    q('base64 run of 8,000', base64.slice(0, 8_000)),
    {
      name: '12 KB two-word (a × 6,000 + b × 6,000)',
      kind: 'document',
      text: `${'a'.repeat(6_000)} ${'b'.repeat(6_000)}`,
    },
    { name: '1 MB base64', kind: 'document', text: base64.slice(0, 1_000_000) },
    { name: '1 MB single run (a × 1,000,000)', kind: 'document', text: 'a'.repeat(1_000_000) },
    { name: '1 MB single CJK run (规 × 333,333)', kind: 'document', text: '规'.repeat(333_333) },
    {
      name: '2 MB two-word (a × 999,999 + b × 1,000,000)',
      kind: 'document',
      text: `${'a'.repeat(999_999)} ${'b'.repeat(1_000_000)}`,
    },
    { name: 'system prompt 规 × 8,000', kind: 'system prompt', text: '规'.repeat(8_000) },
    { name: 'system prompt 🧪 × 4,000 (8,000 UTF-16)', kind: 'system prompt', text: '🧪'.repeat(4_000) },
    { name: 'system prompt a × 8,000', kind: 'system prompt', text: 'a'.repeat(8_000) },
  ];
}

/** The probe: one session asking without a pause, timing every delta. */
class Probe {
  /** Arrival (performance.now) and gap to the previous delta of the same answer, in ms. */
  readonly gaps: Array<{ at: number; gapMs: number }> = [];
  /** Arrival of the first delta and the wait since the POST, in ms. */
  readonly firstDelta: Array<{ at: number; waitMs: number }> = [];
  readonly outcomes: Record<string, number> = {};
  private stopped = false;
  private loop?: Promise<void>;

  constructor(
    private readonly client: AskClient,
    private readonly projectId: string,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  /** Longest gap between deltas that arrived in [from, to) (performance.now ms). */
  maxGap(from: number, to: number): number {
    return this.gaps.filter((g) => g.at >= from && g.at < to).reduce((m, g) => Math.max(m, g.gapMs), 0);
  }

  maxFirstWait(from: number, to: number): number {
    return this.firstDelta.filter((g) => g.at >= from && g.at < to).reduce((m, g) => Math.max(m, g.waitMs), 0);
  }

  private async run(): Promise<void> {
    let sessionId: string | undefined;
    for (let n = 0; !this.stopped; n += 1) {
      const posted = performance.now();
      let last: number | undefined;
      try {
        const outcome = await this.client.askAndWait(this.projectId, PROBE_QUESTIONS[n % PROBE_QUESTIONS.length], {
          sessionId,
          onEvent: (event) => {
            if (event.type !== 'delta') return;
            const now = performance.now();
            if (last === undefined) this.firstDelta.push({ at: now, waitMs: Math.round(now - posted) });
            else this.gaps.push({ at: now, gapMs: Math.round(now - last) });
            last = now;
          },
        });
        const key = outcome.done ? 'done' : `error ${outcome.error?.status} ${outcome.error?.code}`;
        this.outcomes[key] = (this.outcomes[key] ?? 0) + 1;
        sessionId = n % 5 === 4 ? undefined : outcome.sessionId;
      } catch (err) {
        const key =
          err instanceof AskApiError ? `rejected ${err.status} ${err.body.code}` : `failed ${(err as Error).message}`;
        this.outcomes[key] = (this.outcomes[key] ?? 0) + 1;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  }
}

/** What one hostile input came to. */
interface InputResult {
  name: string;
  kind: HostileInput['kind'];
  utf16: number;
  utf8Bytes: number;
  /** HTTP status of the request that carried it (PATCH for a system prompt). */
  status: number;
  code?: string;
  /** The end: `done`, `error <status> <code>`, an ingestion's status and counts, or `rejected`. */
  outcome: string;
  ms: number;
  loop: Record<string, Window>;
  probeGapMs: number;
  probeFirstDeltaMs: number;
}

async function main(): Promise<void> {
  const command = `node tools/run-ts.js bench/hostile/hostile.bench.ts${process.argv.slice(2).length ? ` ${process.argv.slice(2).join(' ')}` : ''}`;
  const load: Record<string, number> = { start: loadavg()[0] };
  let db: TestDatabase | undefined;
  let stack: Stack | undefined;
  let stackEnv: NodeJS.ProcessEnv | undefined; // its Redis keys are removed at the end
  let redis: Redis | undefined;
  const idle: IdleClient[] = [];
  const benchLoop = monitorEventLoopDelay({ resolution: 10 });
  try {
    console.log('creating a throwaway database and the projects…');
    db = await createTestDatabase();
    const encryptionKey = randomBytes(32).toString('hex');
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(encryptionKey));
    const keys = new ApiKeysRepository(db.dataSource);
    const ingestion = new IngestionService(
      new KnowledgeRepository(db.dataSource),
      new InsightsRepository(db.dataSource),
    );
    const documents = await loadDocuments(KB);
    const newProject = async (name: string) => {
      const project = await projects.create({
        name,
        llmSettings: { provider: 'local', model: 'local' },
        embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
        topK: 6,
      });
      await ingestion.ingest(project.id, documents, new LocalEmbeddingProvider());
      return { id: project.id, key: (await keys.create(project.id, 'hostile bench')).key };
    };
    const probeProject = await newProject('probe');
    const attacker = await newProject('attacker');
    const idleProjects = [];
    for (let i = 0; i < IDLE_PROJECTS; i += 1) {
      const p = await projects.create({ name: `idle ${i}`, llmSettings: { provider: 'local', model: 'local' } });
      idleProjects.push({ id: p.id, key: (await keys.create(p.id, 'hostile bench idle')).key });
    }
    const prefix = `hostile-${randomUUID()}`;
    const env = {
      DATABASE_URL: db.url,
      ASK_KEY_PREFIX: prefix,
      ASK_ENCRYPTION_KEY: encryptionKey,
      ASK_RATE_LIMIT_PER_MINUTE: '1000000',
      INGEST_RATE_LIMIT_PER_MINUTE: '1000000',
      // Idle asks are planted without a job: a deadline past the run keeps the gateway from ending them.
      ASK_DEADLINE_MS: '900000',
      LOG_LEVEL: 'warn',
    };
    console.log('starting the stack…');
    stack = await startStack({ env, logDir: join(ROOT, 'tmp', 'hostile-logs') });
    const gatewayPid = stack.apps['api-gateway'].child.pid!;
    const metricsUrl = (name: AppName) =>
      name === 'api-gateway'
        ? `${stack!.gatewayUrl}/metrics`
        : stack!.apps[name].healthUrl.replace(/\/health$/, '/metrics');
    /** One window's event-loop delay of every app (and of this bench process), since the last call. */
    const lastSched: Record<string, { cpuMs: number; waitMs: number } | null> = {};
    const scrape = async (): Promise<Record<string, Window>> => {
      const out: Record<string, Window> = {};
      for (const name of APPS) {
        const pid = stack!.apps[name].child.pid;
        const sched = schedStat(pid);
        const last = lastSched[name];
        out[name] = {
          ...(await scrapeLoopDelay(metricsUrl(name))),
          ...(sched && last ? { cpuMs: sched.cpuMs - last.cpuMs, waitMs: sched.waitMs - last.waitMs } : {}),
        };
        lastSched[name] = sched;
      }
      out['bench (clients + probe)'] = {
        p99Ms: Math.round(benchLoop.percentile(99) / 1e5) / 10,
        maxMs: Math.round(benchLoop.max / 1e5) / 10,
      };
      benchLoop.reset();
      return out;
    };
    const probeClient = new AskClient(stack.gatewayUrl, probeProject.key);
    const attack = new AskClient(stack.gatewayUrl, attacker.key);
    for (const question of PROBE_QUESTIONS) await probeClient.askAndWait(probeProject.id, question);
    await attack.askAndWait(attacker.id, ORDINARY_QUESTION);

    const probe = new Probe(probeClient, probeProject.id);
    benchLoop.enable();
    await scrape();
    probe.start();
    await new Promise((r) => setTimeout(r, 3_000));
    const t0 = performance.now();
    const baseline = {
      loop: await scrape(),
      probeGapMs: probe.maxGap(0, t0),
      redisConnections: connectionsTo(gatewayPid, REDIS_PORT),
      rssMiB: rssMiB(gatewayPid),
    };
    console.log('baseline', JSON.stringify(baseline));

    // Idle clients: asks planted in the stack's Redis (accepted, never answered), 1,000 per project.
    redis = new Redis(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379', { connectionName: `${prefix}:bench` });
    const planter = new AskEventStream(redis, prefix, 3_600);
    const idleAsks: Array<{ askId: string; project: { id: string; key: string } }> = [];
    for (let i = 0; i < CLIENTS; i += 1) {
      const project = idleProjects[Math.floor(i / 1_000)];
      const askId = randomUUID();
      await planter.open(askId, {
        projectId: project.id,
        sessionId: randomUUID(),
        acceptedAt: new Date().toISOString(),
      });
      await planter.publish(askId, 'accepted', { askId, sessionId: 's' });
      idleAsks.push({ askId, project });
    }
    console.log(`opening ${CLIENTS} idle SSE clients, at most ${RAMP_PER_S}/s and ${OPENING} opening at once…`);
    const rampStart = performance.now();
    // Closed loop: at most OPENING streams between the request and their first event, at most
    // RAMP_PER_S started per second, so the bench never queues connections the gateway has not
    // accepted yet (they were reset once its headers timeout passed: ECONNRESET).
    const batch = Math.max(1, Math.round(RAMP_PER_S / 10));
    for (let i = 0; i < idleAsks.length; i += batch) {
      while (idle.filter((c) => c.status === 0 && !c.ended).length >= OPENING)
        await new Promise((r) => setTimeout(r, 20));
      for (const a of idleAsks.slice(i, i + batch))
        idle.push(openIdleClient(`${stack.gatewayUrl}/api/v1/asks/${a.askId}/events`, a.project.key));
      await new Promise((r) => setTimeout(r, 100));
    }
    await Promise.all(idle.map((c) => c.ready));
    const rampEnd = performance.now();
    const open = () => idle.filter((c) => c.status === 200 && !c.ended).length;
    await new Promise((r) => setTimeout(r, 5_000));
    const held = {
      loop: await scrape(),
      rampSeconds: Math.round((rampEnd - rampStart) / 100) / 10,
      probeGapMs: probe.maxGap(rampStart, performance.now()),
      probeFirstDeltaMs: probe.maxFirstWait(rampStart, performance.now()),
      open: open(),
      refused: idle.filter((c) => c.status !== 200).length,
      statuses: idle.reduce<Record<string, number>>((m, c) => {
        const k = c.status ? String(c.status) : `network ${c.error ?? 'error'}`;
        m[k] = (m[k] ?? 0) + 1;
        return m;
      }, {}),
      redisConnections: connectionsTo(gatewayPid, REDIS_PORT),
      readers: String(await redis.client('LIST'))
        .split('\n')
        .filter((l) => l.includes(` name=${prefix}:events-reader:`)).length,
      rssMiB: rssMiB(gatewayPid),
    };
    console.log('held', JSON.stringify(held));

    const results: InputResult[] = [];
    for (const input of hostileInputs()) {
      const started = performance.now();
      const result: InputResult = {
        name: input.name,
        kind: input.kind,
        utf16: input.text.length,
        utf8Bytes: Buffer.byteLength(input.text, 'utf8'),
        status: 0,
        outcome: '',
        ms: 0,
        loop: {},
        probeGapMs: 0,
        probeFirstDeltaMs: 0,
      };
      try {
        if (input.kind === 'document') {
          const accepted = await attack.ingestKnowledge(attacker.id, [
            { uri: `hostile-${results.length}.txt`, text: input.text },
          ]);
          result.status = 202;
          const end = await attack.followIngestion(attacker.id, accepted.ingestionId);
          const view = await attack.ingestion(attacker.id, accepted.ingestionId);
          result.outcome = end.done
            ? `${view.status}: chunks ${view.counts.chunks}, failed ${view.counts.failed}`
            : `error ${end.error?.status} ${end.error?.code}`;
        } else {
          let question = input.text;
          if (input.kind === 'system prompt') {
            await attack.request('PATCH', `/api/v1/projects/${attacker.id}`, { systemPrompt: input.text });
            question = ORDINARY_QUESTION;
          }
          if (input.kind === 'system prompt') result.status = 200;
          const outcome = await attack.askAndWait(attacker.id, question);
          if (input.kind === 'question') result.status = 202;
          result.outcome = outcome.done
            ? `done (prompt ${outcome.done.usage.promptTokens} tokens)`
            : `error ${outcome.error?.status} ${outcome.error?.code}`;
        }
      } catch (err) {
        if (!(err instanceof AskApiError)) throw err;
        result.status = err.status;
        result.code = err.body.code;
        result.outcome = `rejected ${err.status} ${err.body.code}`;
      }
      const ended = performance.now();
      result.ms = Math.round(ended - started);
      result.loop = await scrape();
      result.probeGapMs = probe.maxGap(started, ended);
      result.probeFirstDeltaMs = probe.maxFirstWait(started, ended);
      results.push(result);
      console.log(
        JSON.stringify({
          ...result,
          loop: Object.fromEntries(Object.entries(result.loop).map(([k, v]) => [k, `${v.p99Ms}/${v.maxMs}`])),
        }),
      );
    }
    const afterInputs = {
      open: open(),
      redisConnections: connectionsTo(gatewayPid, REDIS_PORT),
      rssMiB: rssMiB(gatewayPid),
    };
    await probe.stop();
    for (const c of idle) c.close();
    await new Promise((r) => setTimeout(r, 3_000));
    const afterClose = { redisConnections: connectionsTo(gatewayPid, REDIS_PORT), rssMiB: rssMiB(gatewayPid) };
    load['end'] = loadavg()[0];
    await stack.stop(10_000);
    stackEnv = stack.env;
    stack = undefined;
    write({ command, load, baseline, held, results, afterInputs, afterClose, probe });
  } finally {
    for (const c of idle) c.close();
    redis?.disconnect();
    await stack?.stop(10_000);
    const env = stack?.env ?? stackEnv;
    if (env)
      await removeTestKeys(env).catch((err) => console.error(`removing its Redis keys: ${(err as Error).message}`));
    await db?.drop();
  }
}

const round1 = (n: number) => Math.round(n * 10) / 10;

function write(run: {
  command: string;
  load: Record<string, number>;
  baseline: { loop: Record<string, Window>; probeGapMs: number; redisConnections: number; rssMiB: number | null };
  held: {
    loop: Record<string, Window>;
    rampSeconds: number;
    probeGapMs: number;
    probeFirstDeltaMs: number;
    open: number;
    refused: number;
    statuses: Record<string, number>;
    redisConnections: number;
    readers: number;
    rssMiB: number | null;
  };
  results: InputResult[];
  afterInputs: { open: number; redisConnections: number; rssMiB: number | null };
  afterClose: { redisConnections: number; rssMiB: number | null };
  probe: Probe;
}): void {
  const processes = [...APPS, 'bench (clients + probe)'];
  const windows = [run.held.loop, ...run.results.map((r) => r.loop)];
  const maxOf = (name: string) => windows.reduce((m, w) => Math.max(m, w[name]?.maxMs ?? 0), 0);
  const p99Of = (name: string) => windows.reduce((m, w) => Math.max(m, w[name]?.p99Ms ?? 0), 0);
  const probeGap = Math.max(run.held.probeGapMs, ...run.results.map((r) => r.probeGapMs));
  const probeFirst = Math.max(run.held.probeFirstDeltaMs, ...run.results.map((r) => r.probeFirstDeltaMs));
  const perThousand =
    run.held.rssMiB !== null && run.baseline.rssMiB !== null && CLIENTS > 0
      ? round1(((run.held.rssMiB - run.baseline.rssMiB) / CLIENTS) * 1_000)
      : null;
  const appMax = Math.max(...APPS.map(maxOf));
  const sched = Object.fromEntries(
    APPS.map((a) => [
      a,
      windows.reduce((t, w) => ({ cpuMs: t.cpuMs + (w[a]?.cpuMs ?? 0), waitMs: t.waitMs + (w[a]?.waitMs ?? 0) }), {
        cpuMs: 0,
        waitMs: 0,
      }),
    ]),
  ) as Record<AppName, { cpuMs: number; waitMs: number }>;
  const verdict = (ok: boolean, by: string) => (ok ? 'met' : `missed by ${by}`);
  const summary = {
    clients: CLIENTS,
    idleClientsOpen: run.held.open,
    refused: run.held.refused,
    maxEventLoopDelayMs: Object.fromEntries(processes.map((p) => [p, maxOf(p)])),
    worstWindowP99Ms: Object.fromEntries(processes.map((p) => [p, p99Of(p)])),
    probeLongestGapMs: probeGap,
    probeLongestWaitForFirstDeltaMs: probeFirst,
    probeOutcomes: run.probe.outcomes,
    mainThreadCpuAndWaitMs: sched,
    gatewayRedisConnections: {
      boot: run.baseline.redisConnections,
      withClients: run.held.redisConnections,
      afterInputs: run.afterInputs.redisConnections,
      afterClose: run.afterClose.redisConnections,
      readers: run.held.readers,
    },
    gatewayRssMiB: {
      before: run.baseline.rssMiB,
      withClients: run.held.rssMiB,
      afterInputs: run.afterInputs.rssMiB,
      afterClose: run.afterClose.rssMiB,
      perThousandIdleClients: perThousand,
    },
    goals: {
      loop: verdict(appMax <= GOALS.loopMaxMs, `${round1(appMax - GOALS.loopMaxMs)} ms (worst app ${appMax} ms)`),
      probeGap: verdict(probeGap <= GOALS.probeGapMs, `${probeGap - GOALS.probeGapMs} ms (${probeGap} ms)`),
      redisConnections: verdict(
        run.held.redisConnections <= GOALS.redisConnections,
        `${run.held.redisConnections - GOALS.redisConnections}`,
      ),
    },
  };
  const m = machine();
  const date = new Date().toISOString();
  const results = {
    benchmark: 'hostile inputs (bounded cost)',
    date,
    command: run.command,
    commit: gitCommit(),
    machine: m,
    loadAverage1m: run.load,
    setup: {
      processes:
        'api-gateway, retrieval-worker, synthesis-worker, ingestion-worker as separate Node processes (tools/stack), loopback',
      providers: 'local LLM (chunk delay 25 ms, 4 words per chunk) and local-lexical-v1 embeddings (256)',
      idleClients: `${CLIENTS} SSE clients, one socket each, over ${IDLE_PROJECTS} projects of ≤ 1,000 (the default ASK_STREAMS_PER_PROJECT), on asks planted in Redis (accepted, never answered), opened at most ${RAMP_PER_S}/s with at most ${OPENING} waiting for their first event`,
      schedstat: 'main thread CPU time and run-queue wait per window, /proc/<pid>/schedstat',
      loopDelay:
        "prom-client's nodejs_eventloop_lag_{p99,max}_seconds (perf_hooks.monitorEventLoopDelay, 10 ms resolution), scraped after each window (a scrape resets them)",
      redisConnections:
        "the gateway process's established TCP sockets to the Redis port (/proc/<pid>/fd and /proc/<pid>/net/tcp)",
    },
    summary,
    baseline: run.baseline,
    held: run.held,
    inputs: run.results,
  };
  writeFileSync(join(ROOT, 'bench', 'hostile', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);

  const cell = (d: Window | undefined) =>
    d ? `${d.p99Ms} / ${d.maxMs}${d.waitMs !== undefined ? ` (${d.cpuMs} · ${d.waitMs})` : ''}` : '–';
  const rows = run.results.map(
    (r) =>
      `| ${r.kind}: ${r.name} | ${r.utf8Bytes.toLocaleString('en')} | ${r.status}${r.code ? ` ${r.code}` : ''} | ${r.outcome} | ${r.ms} | ${APPS.map((a) => cell(r.loop[a])).join(' | ')} | ${r.probeGapMs} |`,
  );
  writeResultsSection(
    SECTION,
    `${SECTION}

\`${run.command}\` · ${date.slice(0, 16).replace('T', ' ')} UTC · commit ${results.commit} · ${m.nproc} CPUs (${m.cpuModel}), ${m.totalMemoryGiB} GiB, Node ${m.node} · 1-min load average ${round1(run.load['start'])} at the start, ${round1(run.load['end'])} after the inputs (the machine is shared: above ${m.nproc} other work competes for the CPUs) · ${results.setup.processes}; ${results.setup.providers}. Raw figures: \`bench/hostile/results.json\`.

**Goals** (issue 10): max event-loop delay ≤ ${GOALS.loopMaxMs} ms in every process: **${summary.goals.loop}**; probe's longest gap between deltas ≤ ${GOALS.probeGapMs} ms: **${summary.goals.probeGap}**; ≤ ${GOALS.redisConnections} Redis connections held by the gateway with ${CLIENTS.toLocaleString('en')} clients: **${summary.goals.redisConnections}**.

Idle clients: ${results.setup.idleClients}; ${run.held.open.toLocaleString('en')} open after ${run.held.rampSeconds} s (${run.held.refused} not open: ${
      Object.entries(run.held.statuses)
        .filter(([k]) => k !== '200')
        .map(([k, v]) => `${k} × ${v}`)
        .join(', ') || 'none'
    }), ${run.afterInputs.open.toLocaleString('en')} still open after the inputs. Gateway's Redis connections: ${run.baseline.redisConnections} before the clients, **${run.held.redisConnections} with them** (${run.held.readers} stream readers by CLIENT LIST), ${run.afterInputs.redisConnections} after the inputs, ${run.afterClose.redisConnections} after they left. Gateway RSS: ${run.baseline.rssMiB} MiB before, ${run.held.rssMiB} MiB with the clients: **${perThousand} MiB per 1,000 idle clients**; ${run.afterClose.rssMiB} MiB after they left.

Event-loop delay, p99 / max in ms (${results.setup.loopDelay}), and in brackets the main thread's CPU time · time waiting for a CPU in the window (ms, /proc/<pid>/schedstat: a delay with as much waiting is the shared machine's CPUs busy elsewhere, not the process blocking its loop); the probe's longest gap between two deltas of one answer, in ms, while each input was in flight. The probe asks without a pause on another project; the inputs come one at a time from one attacker project, each followed to its end, with the idle clients held:

| window / input | UTF-8 bytes | answer | end | ms | ${APPS.join(' | ')} | probe gap |
| --- | ---: | --- | --- | ---: | ${APPS.map(() => '---:').join(' | ')} | ---: |
| before the clients (probe alone, 3 s) | | | | | ${APPS.map((a) => cell(run.baseline.loop[a])).join(' | ')} | ${run.baseline.probeGapMs} |
| opening ${CLIENTS.toLocaleString('en')} idle clients, then 5 s held | | | | ${Math.round(run.held.rampSeconds * 1000) + 5_000} | ${APPS.map((a) => cell(run.held.loop[a])).join(' | ')} | ${run.held.probeGapMs} |
${rows.join('\n')}
| **max over the windows with clients** | | | | | ${APPS.map((a) => `**${p99Of(a)} / ${maxOf(a)}**`).join(' | ')} | **${probeGap}** |

Over the windows with clients, each app's main thread used / waited for a CPU (ms): ${APPS.map((a) => `${a} ${sched[a].cpuMs} / ${sched[a].waitMs} (waited ${round1(sched[a].waitMs / Math.max(1, sched[a].cpuMs))}× its CPU time)`).join('; ')}.

The bench process itself (${CLIENTS.toLocaleString('en')} client sockets and the probe): worst window p99 ${p99Of('bench (clients + probe)')} ms, max ${maxOf('bench (clients + probe)')} ms. Probe asks: ${Object.entries(
      run.probe.outcomes,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}; longest wait from POST to the first delta ${probeFirst} ms.

Counting throughput is measured cold and warm in "Counting throughput, cold and warm".
`,
  );
  console.log(JSON.stringify(summary, null, 2));
  console.log('wrote bench/hostile/results.json and its section of bench/RESULTS.md');
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
