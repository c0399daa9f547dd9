import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { type Harness, localProject, startGateway } from '../security/gateway-harness';

/** One open SSE follower: the events parsed so far and a promise of the stream's end. */
interface Follower {
  status: number;
  events: EventSourceMessage[];
  ended: Promise<void>;
  close(): void;
}

/**
 * The ingestion events route (KnowledgeController.stream) on the real gateway, PostgreSQL and Redis:
 * followers of a live ingestion share the process's stream readers (no Redis connection each), are
 * capped per ingestion (ASK_STREAMS_PER_ASK, 3 here) with a typed 429, and receive every event in
 * order, ending after the terminal one. No ingestion worker runs: the test appends the events itself.
 */
describe('the ingestion events route', () => {
  let h: Harness;
  let project: { id: string; key: string };
  let ingestionId: string;
  let eventsUrl: string;

  beforeAll(async () => {
    h = await startGateway({ ASK_STREAMS_PER_ASK: '3' });
    project = await localProject(h, 'ingestion streams');
    const accepted = await h.call('POST', `/api/v1/projects/${project.id}/knowledge`, {
      key: project.key,
      json: { documents: [{ uri: 'a.md', text: 'Alpha.' }] },
    });
    ({ ingestionId, eventsUrl } = accepted.body as { ingestionId: string; eventsUrl: string });
  }, 60_000);
  afterAll(() => h?.close());

  const follow = async (headers: Record<string, string> = {}): Promise<Follower> => {
    const controller = new AbortController();
    const response = await fetch(`${h.baseUrl}${eventsUrl}`, {
      headers: { authorization: `Bearer ${project.key}`, ...headers },
      signal: controller.signal,
    });
    const events: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (event) => events.push(event) });
    const ended = (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          parser.feed(decoder.decode(chunk, { stream: true }));
        }
      } catch {
        // aborted by close()
      }
    })();
    return { status: response.status, events, ended, close: () => controller.abort() };
  };

  /** This gateway's Redis connections by name (`CLIENT LIST`), e.g. `{ "<prefix>:events": 1 }`. */
  const connectionsByName = async (): Promise<Record<string, number>> => {
    const list = (await h.redis.client('LIST')) as string;
    const counts: Record<string, number> = {};
    for (const line of list.split('\n')) {
      const name = /(?:^| )name=(\S*)/.exec(line)?.[1] ?? '';
      if (name.startsWith(`${h.prefix}:`)) counts[name] = (counts[name] ?? 0) + 1;
    }
    return counts;
  };

  const append = (type: string, data: unknown) =>
    h.redis.xadd(`${h.prefix}:ingestion:${ingestionId}:events`, '*', 'type', type, 'data', JSON.stringify(data));

  it('serves three followers on the shared connections, refuses a fourth with 429, and relays every event to each', async () => {
    const followers = [await follow(), await follow(), await follow()];
    expect(followers.map((f) => f.status)).toEqual([200, 200, 200]);
    const fourth = await h.call('GET', eventsUrl, { key: project.key });
    expect(fourth.status).toBe(429);
    expect(fourth.body).toMatchObject({
      code: 'rate_limited',
      details: 'limit=streams_per_ingestion max=3 retry_after=5',
    });

    const ids = [
      await append('started', { documents: 1 }),
      await append('progress', { uri: 'a.md', counts: { done: 1, chunks: 1 } }),
      await append('done', { status: 'completed', counts: { documents: 1, chunks: 1 } }),
    ];
    await Promise.all(followers.map((f) => f.ended));
    for (const f of followers) {
      expect(f.events.map((e) => [e.id, e.event])).toEqual([
        [ids[0], 'started'],
        [ids[1], 'progress'],
        [ids[2], 'done'],
      ]);
      expect(JSON.parse(f.events[2].data)).toEqual({ status: 'completed', counts: { documents: 1, chunks: 1 } });
    }
    // One shared command connection for events, at most ASK_STREAM_READERS (2) readers: not one per follower.
    const names = await connectionsByName();
    expect(names[`${h.prefix}:events`]).toBe(1);
    const readers = Object.entries(names).filter(([name]) => name.startsWith(`${h.prefix}:events-reader:`));
    expect(readers.reduce((sum, [, n]) => sum + n, 0)).toBeLessThanOrEqual(2);
  });

  it('gives the slots back at the end: a resume after `done` is served and ends at once with no event', async () => {
    const events = (await h.redis.xrange(`${h.prefix}:ingestion:${ingestionId}:events`, '-', '+')).map(([id]) => id);
    const resumed = await Promise.all([1, 2, 3].map(() => follow({ 'last-event-id': events[2] })));
    await Promise.all(resumed.map((f) => f.ended));
    expect(resumed.map((f) => [f.status, f.events.length])).toEqual([
      [200, 0],
      [200, 0],
      [200, 0],
    ]);
  });

  it('answers a Last-Event-ID past 2^64 − 1 with the same 400 as the ask route, before any event', async () => {
    // 2^64 has 20 digits: the shape passes, the range does not (Redis would fail mid-stream: 200, then a 500 event).
    for (const id of ['18446744073709551616-0', '0-18446744073709551616', '99999999999999999999-0']) {
      const reply = await h.call('GET', eventsUrl, { key: project.key, headers: { 'last-event-id': id } });
      expect([reply.status, reply.body]).toEqual([
        400,
        {
          error: 'the request is invalid',
          code: 'invalid_request',
          details: 'Last-Event-ID: must be an event id of this stream (like 1718000000000-0) or absent',
        },
      ]);
    }
    // A first part of 2^64 − 1 is in range: served (nothing after it), 200 with no event.
    const last = await follow({ 'last-event-id': '18446744073709551615-0' });
    await last.ended;
    expect([last.status, last.events.length]).toEqual([200, 0]);
  });

  it('resuming after `started` replays the rest in order', async () => {
    const ids = (await h.redis.xrange(`${h.prefix}:ingestion:${ingestionId}:events`, '-', '+')).map(([id]) => id);
    const resumed = await follow({ 'last-event-id': ids[0] });
    await resumed.ended;
    expect(resumed.events.map((e) => e.id)).toEqual(ids.slice(1));
  });
});
