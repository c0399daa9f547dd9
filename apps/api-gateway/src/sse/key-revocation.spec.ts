import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { type Harness, localProject, startGateway } from '../security/gateway-harness';

/** One open SSE follower: its status, the events parsed so far, whether it ended, and its end. */
interface Follower {
  status: number;
  events: EventSourceMessage[];
  isEnded(): boolean;
  ended: Promise<void>;
  close(): void;
}

/**
 * Key revocation and the event streams a key opened (issue 25 item 6), on the real gateway,
 * PostgreSQL and Redis (no worker: the streams stay open, waiting). Each stream re-checks its key
 * every ASK_STREAM_KEY_RECHECK_MS (200 here); once the admin revokes the key, its ask and ingestion
 * streams, and the capability-token stream of an ask it accepted, end with one typed 401 `error`
 * event, while another key's stream and the token stream of an ask the other key accepted go on, and
 * the revoked key's reconnect is a 401.
 */
describe('event streams of a revoked key', () => {
  let h: Harness;
  let project: { id: string; key: string; keyId: string };
  let other: string;
  let askEvents: string;
  let tokenEventsUrl: string;
  let keptTokenEventsUrl: string;
  let ingestionEvents: string;

  beforeAll(async () => {
    h = await startGateway({ ASK_STREAM_KEY_RECHECK_MS: '200' });
    project = await localProject(h, 'revocation');
    other = (await h.keys.create(project.id, 'kept')).key;
    const ask = await h.call('POST', `/api/v1/projects/${project.id}/ask`, {
      key: project.key,
      json: { question: 'Who stays?' },
    });
    tokenEventsUrl = (ask.body as { eventsUrl: string }).eventsUrl;
    askEvents = tokenEventsUrl.split('?')[0];
    const keptAsk = await h.call('POST', `/api/v1/projects/${project.id}/ask`, {
      key: other,
      json: { question: 'Who else stays?' },
    });
    keptTokenEventsUrl = (keptAsk.body as { eventsUrl: string }).eventsUrl;
    const ingestion = await h.call('POST', `/api/v1/projects/${project.id}/knowledge`, {
      key: project.key,
      json: { documents: [{ uri: 'a.md', text: 'Alpha.' }] },
    });
    ingestionEvents = (ingestion.body as { eventsUrl: string }).eventsUrl;
  }, 60_000);
  afterAll(() => h?.close());

  const follow = async (path: string, key?: string): Promise<Follower> => {
    const controller = new AbortController();
    const response = await fetch(`${h.baseUrl}${path}`, {
      headers: key ? { authorization: `Bearer ${key}` } : {},
      signal: controller.signal,
    });
    const events: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (event) => events.push(event) });
    let done = false;
    const ended = (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          parser.feed(decoder.decode(chunk, { stream: true }));
        }
      } catch {
        // aborted by close()
      }
      done = true;
    })();
    return { status: response.status, events, isEnded: () => done, ended, close: () => controller.abort() };
  };

  /** Resolves once `f` ended, or rejects after `ms` (a bound for the test run, not an assertion on time). */
  const endOf = (f: Follower, ms = 10_000) =>
    Promise.race([
      f.ended,
      new Promise((_, fail) => setTimeout(() => fail(new Error('the stream did not end')), ms).unref()),
    ]);

  it('ends the revoked key’s ask, ingestion and token streams with one 401 error event; others go on', async () => {
    const revokedAsk = await follow(askEvents, project.key);
    const revokedIngestion = await follow(ingestionEvents, project.key);
    const tokenAsk = await follow(tokenEventsUrl);
    const keptAsk = await follow(askEvents, other);
    const keptToken = await follow(keptTokenEventsUrl);
    const all = [revokedAsk, revokedIngestion, tokenAsk, keptAsk, keptToken];
    expect(all.map((f) => f.status)).toEqual([200, 200, 200, 200, 200]);
    const seen = (f: Follower) => [f.isEnded(), ...f.events.map((e) => e.event)];
    // Several re-checks pass while the key is valid: nothing ends; each ask stream has its `accepted`.
    await new Promise((done) => setTimeout(done, 700));
    expect(all.map(seen)).toEqual([
      [false, 'accepted'],
      [false],
      [false, 'accepted'],
      [false, 'accepted'],
      [false, 'accepted'],
    ]);

    const revoke = await h.call('DELETE', `/api/v1/projects/${project.id}/keys/${project.keyId}`, { key: h.adminKey });
    expect(revoke.status).toBe(204);
    await Promise.all([endOf(revokedAsk), endOf(revokedIngestion), endOf(tokenAsk)]);

    const terminal = {
      event: 'error',
      id: undefined,
      data: JSON.stringify({
        status: 401,
        error: 'authentication is required',
        code: 'unauthorized',
        details: 'the API key this stream was opened with has been revoked',
      }),
    };
    const frames = (f: Follower) => f.events.map((e) => ({ event: e.event, id: e.id, data: e.data }));
    expect(frames(revokedAsk).slice(1)).toEqual([terminal]);
    expect(frames(revokedIngestion)).toEqual([terminal]);
    expect(frames(tokenAsk).slice(1)).toEqual([terminal]);
    // Past several more re-checks, the other key's stream and the token stream of its ask are open, with no new event.
    await new Promise((done) => setTimeout(done, 700));
    expect([keptAsk, keptToken].map(seen)).toEqual([
      [false, 'accepted'],
      [false, 'accepted'],
    ]);
    keptAsk.close();
    keptToken.close();

    // The revoked key's reconnect is refused before any stream opens.
    const again = await h.call('GET', askEvents, { key: project.key });
    expect([again.status, again.body?.code]).toEqual([401, 'unauthorized']);
  }, 30_000);
});
