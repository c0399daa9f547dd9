/**
 * Redis restarts (SIGKILL, 3 s down) under one streaming ask and one queued ask, on a suite's own
 * redis-server: with persistence (AOF, `appendfsync always`: everything comes back) and without (it
 * comes back empty: jobs, streams and meta lost). The SSE clients reconnect with Last-Event-ID as
 * EventSource does; every frame they see is an event with a stream id or a typed 503 `error` without
 * one, every refused reconnect a typed JSON answer, and both asks end `done` with exactly one stored
 * row equal to the text a reset-honouring client shows (without persistence: re-enqueued from the
 * PostgreSQL `asks` table by the reconciler, within RECONCILE_MIN_AGE_MS + ASK_RECONCILE_INTERVAL_MS).
 */
import { createParser } from 'eventsource-parser';
import { type FaultFixture, isTyped, QUESTIONS, rowsPerAsk, startFixture } from './fixture';
import { type RedisServer, startRedis } from '@ask/stack';

const DEADLINE_MS = 60_000;
const DOWN_MS = 3_000;
/** The 503 a relay ends with when it loses Redis (no id: not one of the ask's events). */
const UNREACHABLE = {
  status: 503,
  code: 'internal_error',
  error: 'service unavailable',
  details: 'the event stream is unreachable; reconnect with Last-Event-ID',
};

/** One SSE frame as the wire carried it; `id` undefined when the frame had no id line. */
interface Frame {
  id?: string;
  event?: string;
  data: unknown;
}

/** One connection of a client: its status, its JSON body when refused, its frames when answered. */
interface Connection {
  status: number;
  body?: unknown;
  frames: Frame[];
}

/** A client following one ask as EventSource does: reconnect after any end, with the last id received. */
interface Follower {
  askId: string;
  connections: Connection[];
  /** The ask's events received (frames with an id), in order, over all connections. */
  events: Frame[];
  end: 'done' | 'error' | 'hung';
  /** Resolves once `check` holds on the events received so far (or the client gave up). */
  until(check: (events: Frame[]) => boolean): Promise<void>;
  ended: Promise<void>;
}

function followRaw(baseUrl: string, apiKey: string, askId: string, limitMs: number): Follower {
  const follower = { askId, connections: [], events: [], end: 'hung' } as unknown as Follower;
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((w) => w());
  let finished = false;
  follower.until = (check) =>
    new Promise<void>((resolve) => {
      const test = () => {
        if (check(follower.events) || finished) {
          waiters.delete(test);
          resolve();
        }
      };
      waiters.add(test);
      test();
    });
  follower.ended = (async () => {
    const started = Date.now();
    let lastEventId: string | undefined;
    while (Date.now() - started < limitMs && follower.end === 'hung') {
      const connection: Connection = { status: 0, frames: [] };
      follower.connections.push(connection);
      const headers: Record<string, string> = { authorization: `Bearer ${apiKey}` };
      if (lastEventId) headers['last-event-id'] = lastEventId;
      try {
        const response = await fetch(`${baseUrl}/api/v1/asks/${askId}/events`, {
          headers,
          signal: AbortSignal.timeout(limitMs),
        });
        connection.status = response.status;
        if (!response.ok)
          connection.body = await response
            .json()
            .catch(async () => `not JSON: ${await response.text().catch(() => '')}`);
        else if (response.body) {
          const parser = createParser({
            onEvent: (message) => {
              let data: unknown;
              try {
                data = JSON.parse(message.data);
              } catch {
                data = `not JSON: ${message.data}`;
              }
              const frame: Frame = { id: message.id, event: message.event, data };
              connection.frames.push(frame);
              if (frame.id !== undefined) {
                lastEventId = frame.id;
                follower.events.push(frame);
                if (frame.event === 'done' || frame.event === 'error') follower.end = frame.event;
              }
              notify();
            },
          });
          const decoder = new TextDecoder();
          for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
            parser.feed(decoder.decode(chunk, { stream: true }));
        }
      } catch {
        // refused or cut (the gateway lost Redis, or the connection dropped): reconnect
      }
      if (follower.end === 'hung') await new Promise((r) => setTimeout(r, 250));
    }
    finished = true;
    notify();
  })();
  return follower;
}

/** Event types in order, a run of deltas written once as `delta+`. */
function shape(events: Frame[]): string {
  return events
    .map((e) => e.event)
    .filter((type, i, all) => !(type === 'delta' && all[i - 1] === 'delta'))
    .map((type) => (type === 'delta' ? 'delta+' : type))
    .join(' ');
}

/** The text a client shows: the deltas after the last reset. */
function shown(events: Frame[]): string {
  let text = '';
  for (const e of events) {
    if (e.event === 'reset') text = '';
    if (e.event === 'delta') text += (e.data as { text: string }).text;
  }
  return text;
}

/** A client's connections in order, runs of the same answer counted: `200 (7 frames, 503 without id)`, `503 internal_error ×2`. */
function connectionsOf(f: Follower): string {
  const labels = f.connections.map((k) =>
    k.status === 200
      ? `200 (${k.frames.filter((fr) => fr.id !== undefined).length} events${k.frames.some((fr) => fr.id === undefined) ? ', 503 without id' : ''})`
      : `${k.status} ${(k.body as { code?: string; details?: string })?.code ?? ''}: ${(k.body as { details?: string })?.details ?? ''}`,
  );
  const runs: string[] = [];
  for (let i = 0; i < labels.length;) {
    let j = i;
    while (j < labels.length && labels[j] === labels[i]) j++;
    runs.push(j - i > 1 ? `${labels[i]} x${j - i}` : labels[i]);
    i = j;
  }
  return runs.join(' | ');
}

interface RestartCase {
  persistence: 'aof' | 'none';
  args: string[];
  /** The shape of the streaming ask's events; of the queued ask's. */
  streaming: string;
  queued: string;
}

const CASES: RestartCase[] = [
  {
    persistence: 'aof',
    args: ['--appendonly', 'yes', '--appendfsync', 'always'],
    streaming: 'accepted retrieved budget delta+ reset budget delta+ done',
    queued: 'accepted retrieved budget delta+ done',
  },
  {
    persistence: 'none',
    args: [],
    streaming: 'accepted retrieved budget delta+ reset retrieved budget delta+ done',
    queued: 'accepted retrieved reset retrieved budget delta+ done',
  },
];

describe.each(CASES)('fault: Redis restarts (persistence: $persistence) under a streaming and a queued ask', (c) => {
  let redis: RedisServer;
  let fx: FaultFixture;
  let streaming: Follower;
  let queued: Follower;

  beforeAll(async () => {
    redis = await startRedis(10_000, c.args);
    fx = await startFixture({
      name: `redis-restart-${c.persistence}`,
      redisUrl: redis.url,
      env: {
        // About 10 s of streaming per answer, one answer at a time: the second ask waits in the queue.
        LOCAL_LLM_CHUNK_DELAY_MS: '120',
        SYNTHESIS_CONCURRENCY: '1',
        ASK_DEADLINE_MS: String(DEADLINE_MS),
        SYNTHESIS_LOCK_DURATION_MS: '5000',
        SYNTHESIS_STALLED_INTERVAL_MS: '2000',
      },
    });
    const limit = DEADLINE_MS + 30_000;
    const a = await fx.client.ask(fx.projectId, QUESTIONS[0]);
    streaming = followRaw(fx.stack.gatewayUrl, fx.apiKey, a.askId, limit);
    const b = await fx.client.ask(fx.projectId, QUESTIONS[1]);
    queued = followRaw(fx.stack.gatewayUrl, fx.apiKey, b.askId, limit);
    await streaming.until((events) => events.filter((e) => e.event === 'delta').length >= 3);
    await queued.until((events) => events.some((e) => e.event === 'retrieved'));
    expect(streaming.end).toBe('hung');
    expect(queued.events.map((e) => e.event)).toEqual(['accepted', 'retrieved']);
    await redis.restart({ keepData: false, downMs: DOWN_MS });
    await Promise.all([streaming.ended, queued.ended]);
    for (const f of [streaming, queued])
      console.log(`redis-restart ${c.persistence} ${f.askId}: ${shape(f.events)}; connections ${connectionsOf(f)}`);
  });

  afterAll(async () => {
    await fx?.close();
    await redis?.close();
  });

  it('shows each client only events with a stream id, or the typed 503 without one; every refusal is typed JSON', () => {
    for (const f of [streaming, queued]) {
      for (const k of f.connections) {
        for (const frame of k.frames) {
          if (frame.id === undefined) expect(frame).toEqual({ event: 'error', id: undefined, data: UNREACHABLE });
          else expect(frame.id).toMatch(/^\d+-\d+$/);
          if (frame.event === 'error') expect(isTyped(frame.data as never)).toBe(true);
        }
        // A refused reconnect is a typed 503 (Redis away, or the ask being restored): never a 404 or 400
        // that would end an ask still running. The body is the seed's (its status is the HTTP status).
        if (k.status !== 200 && k.status !== 0) {
          expect(k.status).toBe(503);
          expect(isTyped({ status: k.status, ...(k.body as object) })).toBe(true);
        }
      }
    }
  });

  it('the streaming ask: its events, in order, end with one done, last; the stored row is the text shown', async () => {
    expect([streaming.end, shape(streaming.events)]).toEqual(['done', c.streaming]);
    const rows = await rowsPerAsk(fx.db.dataSource, [streaming.askId]);
    expect(rows.get(streaming.askId)).toEqual({ count: 1, answer: shown(streaming.events) });
  });

  it('the queued ask: its events, in order, end with one done, last; the stored row is the text shown', async () => {
    expect([queued.end, shape(queued.events)]).toEqual(['done', c.queued]);
    const rows = await rowsPerAsk(fx.db.dataSource, [queued.askId]);
    expect(rows.get(queued.askId)).toEqual({ count: 1, answer: shown(queued.events) });
  });

  it("records both asks as done in the asks table (at the reconciler's next pass), re-enqueued as often as Redis lost them", async () => {
    const read = (): Promise<Array<{ id: string; state: string; requeues: number }>> =>
      fx.db.dataSource.query('SELECT id, state, requeues FROM asks WHERE id = ANY($1::uuid[]) ORDER BY accepted_at', [
        [streaming.askId, queued.askId],
      ]);
    let rows = await read();
    for (let i = 0; i < 60 && rows.some((r) => r.state === 'accepted'); i++) {
      await new Promise((r) => setTimeout(r, 500));
      rows = await read();
    }
    const requeues = c.persistence === 'none' ? 1 : 0;
    expect(rows).toEqual([
      { id: streaming.askId, state: 'done', requeues },
      { id: queued.askId, state: 'done', requeues },
    ]);
  });
});
