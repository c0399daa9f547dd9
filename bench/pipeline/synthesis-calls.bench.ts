/**
 * Round trips of the synthesis worker per ask (each one is CPU and latency): the worker's own Nest module
 * (`SynthesisWorkerModule`: the `ask-synthesis` and `ask-memory` processors) in this process, fed
 * synthesis jobs as the retrieval worker enqueues them, on a throwaway database and the bench's own
 * Redis server. Counts, per ask, the PostgreSQL statements the worker's pg clients send (each one a
 * round trip, `BEGIN`/`COMMIT` included) and the Redis commands its ioredis clients send (BullMQ's
 * included; a MULTI's commands one each), by statement and by command, and the process's CPU per ask.
 *
 *   node tools/run-ts.js bench/pipeline/synthesis-calls.bench.ts [--asks 60] [--warmup-asks 20]
 *
 * The project is the pipeline bench's (local providers, default memory `per-turn`), in sessions of
 * five turns, eight knowledge items per ask. The harness's own connections (enqueueing, waiting) are
 * not counted. Prints JSON; writes nothing. CPU includes the harness's waiting and the stand-in.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import Redis from 'ioredis';
import { Queue } from 'bullmq';
import { Client } from 'pg';
import { CHUNK_TOKEN_COUNTER_ID, JobName, QueueName, type RetrievedItem } from '@ask/ask-contracts';
import { AskEventStream } from '@ask/event-stream';
import { CredentialsCipher, ProjectsRepository, SessionsRepository } from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { TiktokenCounter } from '@ask/token-counting';
import { type RedisServer, startRedis } from '@ask/stack';
import { numberArg } from '../common';

const ASKS = numberArg('asks', 60);
const WARMUP = numberArg('warmup-asks', 20);
const TURNS = 5;
const ROOT = join(__dirname, '..', '..');

/** Counts of one phase. */
interface Tally {
  pg: Map<string, number>;
  redis: Map<string, number>;
}

const excluded = new WeakSet<object>();
let tally: Tally | undefined;

function countPg(this: object, sql: unknown): void {
  if (!tally || excluded.has(this)) return;
  const text = typeof sql === 'string' ? sql : ((sql as { text?: string })?.text ?? String(sql));
  const key = text.replace(/\s+/g, ' ').trim().slice(0, 70);
  tally.pg.set(key, (tally.pg.get(key) ?? 0) + 1);
}

const pgQuery = Client.prototype.query as (...args: unknown[]) => unknown;
(Client.prototype as unknown as { query: (...args: unknown[]) => unknown }).query = function (
  this: object,
  ...args: unknown[]
) {
  countPg.call(this, args[0]);
  return pgQuery.apply(this, args);
};
const sendCommand = Redis.prototype.sendCommand;
Redis.prototype.sendCommand = function (this: Redis, command, ...rest) {
  if (tally && !excluded.has(this)) {
    const name = (command as unknown as { name: string }).name.toLowerCase();
    tally.redis.set(name, (tally.redis.get(name) ?? 0) + 1);
  }
  return sendCommand.call(this, command, ...rest);
} as typeof sendCommand;

/** Eight knowledge items cut from the fixture corpus, with their stored o200k counts (as retrieval hands them over). */
function items(): RetrievedItem[] {
  const text = readFileSync(join(ROOT, 'fixtures', 'data', 'kb-pgvector', 'README.md'), 'utf8');
  const paragraphs = text.split(/\n\s*\n/).filter((p) => p.trim().length > 200);
  const counter = new TiktokenCounter('o200k_base');
  return paragraphs.slice(0, 8).map((p, i) => ({
    id: randomUUID(),
    kind: 'knowledge',
    title: `README.md #${i + 1}`,
    text: p,
    score: 0.5 - i * 0.01,
    source: 'README.md',
    tokenCounts: { [CHUNK_TOKEN_COUNTER_ID]: counter.countText(p) },
  }));
}

const QUESTIONS = [
  'How do I create an HNSW index with pgvector?',
  'And what does the ef_search setting change?',
  'Which distance operators are there?',
  'Can I store half-precision vectors?',
  'How do I check that the index is used?',
];

async function main(): Promise<void> {
  let db: TestDatabase | undefined;
  let server: RedisServer | undefined;
  const closers: Array<() => Promise<unknown>> = [];
  try {
    db = await createTestDatabase();
    server = await startRedis();
    const prefix = `calls-${randomUUID()}`;
    Object.assign(process.env, {
      DATABASE_URL: db.url,
      REDIS_URL: server.url,
      ASK_KEY_PREFIX: prefix,
      LOCAL_LLM_CHUNK_DELAY_MS: '0',
      LOG_LEVEL: 'warn',
      SYNTHESIS_HEALTH_PORT: '0',
    });
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    const project = await projects.create({
      name: 'bench-calls',
      llmSettings: { provider: 'local', model: 'local' },
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
      topK: 8,
    });
    const sessions = new SessionsRepository(db.dataSource);

    const redis = new Redis(server.url);
    excluded.add(redis);
    const events = new AskEventStream(redis, prefix, 600);
    // The harness's own connection (BullMQ wraps it: the commands still run on this instance).
    const enqueuer = new Redis(server.url, { maxRetriesPerRequest: null });
    excluded.add(enqueuer);
    const queue = new Queue(QueueName.AskSynthesis, { connection: enqueuer, prefix });
    const probe = new Client({ connectionString: db.url });
    await probe.connect();
    excluded.add(probe);
    closers.push(
      () => queue.close(),
      async () => redis.disconnect(),
      async () => enqueuer.disconnect(),
      () => probe.end(),
    );

    const { SynthesisWorkerModule } = await import('../../apps/synthesis-worker/src/synthesis-worker.module');
    const app = await NestFactory.createApplicationContext(SynthesisWorkerModule, { logger: ['error', 'warn'] });
    app.enableShutdownHooks();
    closers.unshift(() => app.close());

    const retrieved = items();
    let sessionId = '';
    let turn = 0;
    const ask = async (): Promise<void> => {
      if (turn % TURNS === 0) sessionId = (await sessions.create(project.id, 'calls')).id;
      const question = QUESTIONS[turn % TURNS];
      turn += 1;
      const askId = randomUUID();
      const acceptedAt = new Date().toISOString();
      await events.open(askId, { projectId: project.id, sessionId, acceptedAt }, { askId, sessionId });
      const data = { askId, projectId: project.id, sessionId, question, acceptedAt, items: retrieved };
      await queue.add(JobName.Synthesize, data, { jobId: askId, removeOnComplete: true, attempts: 3 });
      // The ask is over for this count when its job is gone (completed and removed) and its pair has its summary.
      for (let waited = 0; ; waited += 5) {
        if (waited > 30_000) throw new Error(`ask ${askId} did not finish`);
        await new Promise((r) => setTimeout(r, 5));
        if (await queue.getJob(askId)) continue;
        const { rows } = await probe.query(
          `SELECT count(*)::int AS n FROM turn_summaries t JOIN ask_session_messages m ON m.id = t.message_id WHERE m.ask_id = $1`,
          [askId],
        );
        if (rows[0].n === 1) break;
      }
    };

    for (let i = 0; i < WARMUP; i += 1) await ask();
    tally = { pg: new Map(), redis: new Map() };
    const cpu = process.cpuUsage();
    for (let i = 0; i < ASKS; i += 1) await ask();
    const used = process.cpuUsage(cpu);
    const counted = tally;
    tally = undefined;
    const perAsk = (m: Map<string, number>) =>
      Object.fromEntries([...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Math.round((v / ASKS) * 100) / 100]));
    const total = (m: Map<string, number>) =>
      Math.round(([...m.values()].reduce((a, b) => a + b, 0) / ASKS) * 100) / 100;
    console.log(
      JSON.stringify(
        {
          asks: ASKS,
          cpuMsPerAsk: Math.round(((used.user + used.system) / 1000 / ASKS) * 10) / 10,
          pgStatementsPerAsk: total(counted.pg),
          redisCommandsPerAsk: total(counted.redis),
          pg: perAsk(counted.pg),
          redis: perAsk(counted.redis),
        },
        null,
        2,
      ),
    );
  } finally {
    for (const close of closers) await close().catch(() => undefined);
    await db?.drop();
    await server?.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
