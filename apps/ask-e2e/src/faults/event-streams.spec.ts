/**
 * The SSE relay on shared Redis connections, against a gateway process alone on a Redis of its own
 * (so every client of that Redis but this suite's is the gateway's): 1,000 open streams over a fixed
 * number of connections, the stream caps, resume after the terminal event past the deadline,
 * out-of-range Last-Event-IDs, and a Redis restart mid-relay. Asks are written straight into Redis
 * with the event-stream lib (no workers), so every stream holds exactly the events the case put there.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Redis from 'ioredis';
import { createParser } from 'eventsource-parser';
import { AskEventStream } from '@ask/event-stream';
import { ApiKeysRepository, CredentialsCipher, ProjectsRepository } from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { freePort, type RedisServer, type RunningApp, startRedis, stopApp } from '@ask/stack';

const ROOT = resolve(__dirname, '..', '..', '..', '..');
const STREAMS = 1_000;
const PER_ASK = 3;
const READERS = 2;
const usage = { promptTokens: 1, completionTokens: 1 };

/** One SSE frame as the wire carries it; `id` undefined when the frame had no id line. */
interface Frame {
  id?: string;
  event?: string;
  data: unknown;
}

describe('event streams on shared Redis connections (gateway process, own Redis)', () => {
  let redis: RedisServer;
  let db: TestDatabase;
  let gateway: RunningApp;
  let baseUrl: string;
  let suite: Redis;
  let events: AskEventStream;
  let projectId: string;
  let apiKey: string;
  const prefix = `streams-${randomUUID()}`;

  beforeAll(async () => {
    [redis, db] = await Promise.all([startRedis(), createTestDatabase()]);
    const encryptionKey = randomBytes(32).toString('hex');
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(encryptionKey));
    projectId = (
      await projects.create({ name: 'streams', llmSettings: { provider: 'local', model: 'local' } as never })
    ).id;
    apiKey = (await new ApiKeysRepository(db.dataSource).create(projectId, 'streams suite')).key;
    suite = new Redis(redis.url, { connectionName: 'streams-suite' });
    events = new AskEventStream(suite, prefix, 600);
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    gateway = await startGateway({
      GATEWAY_PORT: String(port),
      DATABASE_URL: db.url,
      REDIS_URL: redis.url,
      ASK_KEY_PREFIX: prefix,
      ASK_ENCRYPTION_KEY: encryptionKey,
      ASK_STREAMS_PER_ASK: String(PER_ASK),
      ASK_STREAMS_PER_PROJECT: String(STREAMS),
      ASK_STREAM_READERS: String(READERS),
      LOG_LEVEL: 'warn',
    });
  });

  afterAll(async () => {
    if (gateway) await stopApp(gateway, 5_000);
    suite?.disconnect();
    await db?.drop().catch(() => undefined);
    await redis?.close();
  });

  /** An ask of the suite's project with these events already in its stream; returns the ids. */
  const plantAsk = async (types: Array<'accepted' | 'delta' | 'done'>, acceptedAt = new Date().toISOString()) => {
    const askId = randomUUID();
    await events.open(askId, { projectId, sessionId: randomUUID(), acceptedAt });
    const ids: string[] = [];
    for (const type of types) {
      if (type === 'accepted') ids.push(await events.publish(askId, 'accepted', { askId, sessionId: 's' }));
      if (type === 'delta') ids.push(await events.publish(askId, 'delta', { text: `word${ids.length} ` }));
      if (type === 'done') ids.push(await events.publish(askId, 'done', { messageId: 'm', usage, sources: [] }));
    }
    return { askId, ids };
  };

  /** `CLIENT LIST` of the suite's Redis, without the suite's own connection: the gateway's connections. */
  const gatewayConnections = async () =>
    String(await suite.client('LIST'))
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.includes(' name=streams-suite '));

  it(`holds ${STREAMS} open streams over its boot connections plus ${READERS} readers, and ends each after exactly its events`, async () => {
    const boot = await gatewayConnections();
    const asks = await Promise.all(Array.from({ length: STREAMS }, () => plantAsk(['accepted'])));
    const clients = asks.map((a) => openStream(baseUrl, apiKey, a.askId));
    try {
      await Promise.all(clients.map((c) => c.until((frames) => frames.length === 1)));
      const during = await gatewayConnections();
      const readers = during.filter((line) => line.includes(` name=${prefix}:events-reader:`));
      console.log(
        `gateway connections: ${boot.length} at boot, ${during.length} with ${STREAMS} open streams (${readers.length} readers)`,
      );
      expect(readers.length).toBe(READERS);
      expect(during.length).toBe(boot.length + READERS);
      expect(during.length).toBeLessThanOrEqual(8);

      // The project's cap: the stream after the 1,000th is a typed 429.
      const over = await plantAsk(['accepted']);
      const refused = await fetch(`${baseUrl}/api/v1/asks/${over.askId}/events`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(await refused.json()).toEqual({
        error: 'too many requests',
        code: 'rate_limited',
        details: `limit=streams_per_project max=${STREAMS} retry_after=5`,
      });

      const doneIds = await Promise.all(
        asks.map((a) => events.publish(a.askId, 'done', { messageId: 'm', usage, sources: [] })),
      );
      const ended = await Promise.all(clients.map((c) => c.ended));
      expect(ended.map((frames) => frames.map((f) => `${f.event} ${f.id}`))).toEqual(
        asks.map((a, i) => [`accepted ${a.ids[0]}`, `done ${doneIds[i]}`]),
      );
      expect((await gatewayConnections()).length).toBe(boot.length + READERS);
    } finally {
      for (const c of clients) c.close();
      await Promise.all(clients.map((c) => c.ended));
    }
  });

  it(`refuses the stream after ${PER_ASK} open ones on one ask with a typed 429, and takes it once one ended`, async () => {
    const ask = await plantAsk(['accepted']);
    const open = Array.from({ length: PER_ASK }, () => openStream(baseUrl, apiKey, ask.askId));
    await Promise.all(open.map((c) => c.until((frames) => frames.length === 1)));
    const refused = await fetch(`${baseUrl}/api/v1/asks/${ask.askId}/events`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      error: 'too many requests',
      code: 'rate_limited',
      details: `limit=streams_per_ask max=${PER_ASK} retry_after=5`,
    });
    open[0].close();
    await open[0].ended;
    // The slot is given back when the relay notices the client left.
    let status = 429;
    for (let i = 0; i < 50 && status === 429; i++) {
      const next = openStream(baseUrl, apiKey, ask.askId);
      status = await next.status;
      next.close();
      if (status === 429) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(200);
    for (const c of open) c.close();
  });

  it('resumes after done past the deadline with nothing, three times, and the stream still ends with done', async () => {
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const { askId, ids } = await plantAsk(['accepted', 'delta', 'done'], hourAgo);
    for (let i = 0; i < 3; i++) {
      const reply = await readAll(baseUrl, apiKey, askId, ids[2]);
      expect(reply.status).toBe(200);
      expect(reply.frames).toEqual([]);
    }
    const full = await readAll(baseUrl, apiKey, askId);
    expect(full.frames.map((f) => `${f.event} ${f.id}`)).toEqual([
      `accepted ${ids[0]}`,
      `delta ${ids[1]}`,
      `done ${ids[2]}`,
    ]);
    expect(await suite.xlen(events.streamKey(askId))).toBe(3);
  });

  it('ends an ask past its deadline with exactly one 504 error carrying its stream id; reconnects replay it, never append another', async () => {
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const { askId, ids } = await plantAsk(['accepted'], hourAgo);
    const first = await readAll(baseUrl, apiKey, askId);
    const stored = await events.readAll(askId);
    expect(stored.map((e) => e.type)).toEqual(['accepted', 'error']);
    const timeout = {
      status: 504,
      code: 'llm_upstream',
      error: 'the llm provider did not answer in time',
      details: 'the ask passed its deadline without an answer',
    };
    expect(first.frames).toEqual([
      { event: 'accepted', id: ids[0], data: { askId, sessionId: 's' } },
      { event: 'error', id: stored[1].id, data: timeout },
    ]);
    expect((await readAll(baseUrl, apiKey, askId, ids[0])).frames).toEqual([
      { event: 'error', id: stored[1].id, data: timeout },
    ]);
    expect((await readAll(baseUrl, apiKey, askId, stored[1].id)).frames).toEqual([]);
    expect(await suite.xlen(events.streamKey(askId))).toBe(2);
  });

  it('answers out-of-range and malformed Last-Event-IDs with a typed 400, on an ask in flight, and publishes nothing', async () => {
    const { askId, ids } = await plantAsk(['accepted', 'delta']);
    const [ms] = ids[1].split('-');
    const cases: Array<[string, string]> = [
      ['99999999999999999999-0', 'Last-Event-ID: must be an event id of this stream (like 1718000000000-0) or absent'],
      [`${BigInt(ms) + 1n}-0`, 'Last-Event-ID: later than the last event of this stream'],
      ['1-0', 'Last-Event-ID: not the id of an event of this stream'],
      ['1', 'Last-Event-ID: must be an event id of this stream (like 1718000000000-0) or absent'],
    ];
    for (const [id, details] of cases) {
      const reply = await fetch(`${baseUrl}/api/v1/asks/${askId}/events`, {
        headers: { authorization: `Bearer ${apiKey}`, 'last-event-id': id },
      });
      expect([id, reply.status, await reply.json()]).toEqual([
        id,
        400,
        { error: 'the request is invalid', code: 'invalid_request', details },
      ]);
    }
    expect(await suite.xlen(events.streamKey(askId))).toBe(2);
  });

  it('answers out-of-range ids on an ask done an hour ago (past its deadline) with a typed 400, and appends nothing', async () => {
    const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
    const { askId, ids } = await plantAsk(['accepted', 'delta', 'done'], hourAgo);
    const [ms] = ids[2].split('-');
    const cases: Array<[string, string]> = [
      ['99999999999999999999-0', 'Last-Event-ID: must be an event id of this stream (like 1718000000000-0) or absent'],
      ['18446744073709551615-18446744073709551615', 'Last-Event-ID: later than the last event of this stream'],
      [`${BigInt(ms) + 1n}-0`, 'Last-Event-ID: later than the last event of this stream'],
      ['1-0', 'Last-Event-ID: not the id of an event of this stream'],
    ];
    for (const [id, details] of cases) {
      const reply = await fetch(`${baseUrl}/api/v1/asks/${askId}/events`, {
        headers: { authorization: `Bearer ${apiKey}`, 'last-event-id': id },
      });
      expect([id, reply.status, await reply.json()]).toEqual([
        id,
        400,
        { error: 'the request is invalid', code: 'invalid_request', details },
      ]);
    }
    expect((await events.readAll(askId)).map((e) => `${e.type} ${e.id}`)).toEqual([
      `accepted ${ids[0]}`,
      `delta ${ids[1]}`,
      `done ${ids[2]}`,
    ]);
  });

  it('ends a stream with a typed 503 error event without an id when Redis restarts mid-relay; the resume continues exactly', async () => {
    const { askId, ids } = await plantAsk(['accepted', 'delta']);
    const client = openStream(baseUrl, apiKey, askId);
    await client.until((frames) => frames.length === 2);
    await redis.restart({ keepData: true, downMs: 1_000 });
    const cut = await client.ended;
    expect(cut).toEqual([
      { event: 'accepted', id: ids[0], data: { askId, sessionId: 's' } },
      { event: 'delta', id: ids[1], data: { text: 'word1 ' } },
      {
        event: 'error',
        id: undefined,
        data: {
          status: 503,
          code: 'internal_error',
          error: 'service unavailable',
          details: 'the event stream is unreachable; reconnect with Last-Event-ID',
        },
      },
    ]);
    expect(client.text()).not.toContain('Internal server error');
    // Back up (the gateway's connections reconnect): the rest of the ask, after the last id received.
    const later = [
      await events.publish(askId, 'delta', { text: 'word2' }),
      await events.publish(askId, 'done', { messageId: 'm', usage, sources: [] }),
    ];
    let resumed: Frame[] = [];
    for (let attempt = 0; attempt < 50; attempt++) {
      const reply = await readAll(baseUrl, apiKey, askId, ids[1]);
      if (reply.status === 200) {
        resumed = reply.frames;
        break;
      }
      expect(reply.status).toBe(503); // typed JSON while the gateway reconnects
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(resumed.map((f) => `${f.event} ${f.id}`)).toEqual([`delta ${later[0]}`, `done ${later[1]}`]);
  });
});

/** Starts the gateway alone as a process (as tools/stack does) and waits for its /health. */
async function startGateway(env: NodeJS.ProcessEnv): Promise<RunningApp> {
  const logDir = join(ROOT, 'tmp', 'fault-logs', `event-streams-${process.pid}`);
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, 'api-gateway.log');
  const child: ChildProcess = spawn(
    process.execPath,
    [join(ROOT, 'tools', 'run-ts.js'), 'apps/api-gateway/src/main.ts'],
    {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const log = createWriteStream(logFile);
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const app: RunningApp = {
    name: 'api-gateway',
    child,
    healthUrl: `http://127.0.0.1:${env.GATEWAY_PORT}/health`,
    logFile,
  };
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}; see ${logFile}`);
    if (
      await fetch(app.healthUrl).then(
        (r) => r.ok,
        () => false,
      )
    )
      return app;
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`gateway not healthy; see ${logFile}`);
}

/** An open SSE client: frames as they arrive (parsed with eventsource-parser, ids exactly as sent). */
function openStream(baseUrl: string, apiKey: string, askId: string, lastEventId?: string) {
  const controller = new AbortController();
  const frames: Frame[] = [];
  let raw = '';
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((w) => w());
  let resolveStatus!: (status: number) => void;
  const status = new Promise<number>((r) => (resolveStatus = r));
  let finished = false;
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
  if (lastEventId) headers['last-event-id'] = lastEventId;
  const ended = (async () => {
    try {
      const response = await fetch(`${baseUrl}/api/v1/asks/${askId}/events`, { headers, signal: controller.signal });
      resolveStatus(response.status);
      if (!response.ok || !response.body) return frames;
      const parser = createParser({
        onEvent: (message) => {
          frames.push({ id: message.id, event: message.event, data: JSON.parse(message.data) });
          notify();
        },
      });
      const decoder = new TextDecoder();
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        const text = decoder.decode(chunk, { stream: true });
        raw += text;
        parser.feed(text);
      }
    } catch {
      resolveStatus(0);
    } finally {
      finished = true;
      notify();
    }
    return frames;
  })();
  return {
    status,
    ended,
    text: () => raw,
    close: () => controller.abort(),
    /** Resolves once `check(frames)` holds (or the stream ended). */
    until: (check: (frames: Frame[]) => boolean) =>
      new Promise<void>((resolveUntil) => {
        const test = () => {
          if (check(frames) || finished) {
            waiters.delete(test);
            resolveUntil();
          }
        };
        waiters.add(test);
        test();
      }),
  };
}

/** Reads a stream to its end: the status and every frame. */
async function readAll(
  baseUrl: string,
  apiKey: string,
  askId: string,
  lastEventId?: string,
): Promise<{ status: number; frames: Frame[] }> {
  const client = openStream(baseUrl, apiKey, askId, lastEventId);
  const frames = await client.ended;
  return { status: await client.status, frames };
}
