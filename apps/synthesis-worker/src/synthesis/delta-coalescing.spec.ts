import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import type { AskEvent, RetrievedItem } from '@ask/ask-contracts';
import { AskEventRelay, AskEventStream, StreamHub } from '@ask/event-stream';
import { type FakeUpstream } from '@ask/fake-upstream';
import { ProjectsRepository, SessionsRepository } from '@ask/persistence';
import { connectTestRedis } from '@ask/testing';
import { SynthesisService } from './synthesis.service';
import { createSynthesisHarness, type SynthesisHarness } from '../testing/synthesis-harness';

// Integration: the real SynthesisService streaming a long answer from the fake OpenAI upstream (one
// token per SSE chunk, 1 ms apart) into the machine's Redis (own key prefix), read back through the
// gateway's relay (AskEventRelay over a StreamHub), as an SSE client resuming with Last-Event-ID would.
describe('delta coalescing in SynthesisService (fake OpenAI upstream, 240 one-token chunks)', () => {
  jest.setTimeout(60_000);
  const encryptionKey = 'a'.repeat(64);
  const words = [' the', ' data', ' is', ' stored', ' in', ' a', ' table', ' and', ' each', ' row', ' has', ' an'];
  const chunks = Array.from({ length: 240 }, (_, i) => words[i % words.length]);
  const answer = chunks.join('');
  const items: RetrievedItem[] = [
    { id: 'k1', kind: 'knowledge', title: 'Tables', text: 'Rows are stored in tables.', score: 0.8 },
  ];
  let harness: SynthesisHarness;
  let redis: Redis;
  let upstream: FakeUpstream;
  let events: AskEventStream;
  let hub: StreamHub;
  let relay: AskEventRelay;
  let projects: ProjectsRepository;
  let sessions: SessionsRepository;

  beforeAll(async () => {
    harness = await createSynthesisHarness({
      name: 'coalesce-test',
      upstream: { answerChunks: chunks, chunkDelayMs: 1 },
      encryptionKey,
    });
    ({ redis, upstream, events, projects, sessions } = harness);
    hub = new StreamHub({ control: redis, readers: 1, connect: () => connectTestRedis({ maxRetriesPerRequest: 0 }) });
    relay = new AskEventRelay(redis, hub, events, 120);
  });

  afterAll(async () => {
    await hub.close();
    await harness.close();
  });

  /** A synthesis service with `SYNTHESIS_DELTA_INTERVAL_MS=intervalMs`. */
  const serviceWith = (intervalMs: number) =>
    harness.service({ env: { SYNTHESIS_DELTA_INTERVAL_MS: String(intervalMs) } });

  /** Opens an ask of a new openai/gpt-4o project on the fake upstream; `run()` synthesizes it. */
  async function newAsk(service: SynthesisService) {
    const project = await projects.create({
      name: 'coalescing',
      llmSettings: { provider: 'openai', model: 'gpt-4o', baseUrl: `${upstream.url}/v1` },
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
    });
    await projects.setCredentials(project.id, { apiKey: `sk-test-${randomUUID()}` });
    const sessionId = (await sessions.create(project.id, 's')).id;
    const askId = randomUUID();
    const acceptedAt = new Date().toISOString();
    await events.open(askId, { projectId: project.id, sessionId, acceptedAt });
    const run = () =>
      service.synthesize(
        { askId, projectId: project.id, sessionId, question: 'How is the data stored?', acceptedAt, items },
        { attempt: 1 },
      );
    return { askId, run };
  }

  const deltasOf = (evs: AskEvent[]) =>
    evs.filter((e) => e.type === 'delta').map((e) => (e.data as { text: string }).text);

  /** Relays the ask's events after `lastEventId` until the terminal event, or until `stopAfter` events arrived. */
  async function follow(askId: string, lastEventId: string | undefined, stopAfter = Infinity): Promise<AskEvent[]> {
    const seen: AskEvent[] = [];
    const controller = new AbortController();
    const start = await relay.resumePoint(askId, lastEventId);
    await relay.relay(askId, start, {
      signal: controller.signal,
      write: (batch) => {
        for (const event of batch) {
          if (seen.length >= stopAfter) return controller.abort();
          seen.push(event);
        }
      },
    });
    return seen;
  }

  it('with coalescing off (0 ms), publishes every provider chunk as its own delta, in order', async () => {
    const { askId, run } = await newAsk(serviceWith(0));
    expect(await run()).toBe('finished');
    const all = await events.readAll(askId);
    expect(deltasOf(all)).toEqual(chunks);
    expect(all.map((e) => e.type).filter((t) => t !== 'delta')).toEqual(['budget', 'done']);
  });

  it('with coalescing on (25 ms), publishes the first chunk alone and at once, then fewer deltas of the exact text', async () => {
    const { askId, run } = await newAsk(serviceWith(25));
    expect(await run()).toBe('finished');
    const texts = deltasOf(await events.readAll(askId));
    expect(texts[0]).toBe(chunks[0]);
    expect(texts.join('')).toBe(answer);
    // 240 chunks ≥ 1 ms apart last ≥ 240 ms: at most one delta per 25 ms held, plus the first and the flush.
    expect(texts.length).toBeLessThan(chunks.length);
  });

  it('resumes exactly with Last-Event-ID mid-answer and after every event: no gap, no repeat', async () => {
    const { askId, run } = await newAsk(serviceWith(25));
    const running = run();
    // A client that leaves after 3 events, mid-answer, and comes back with the last id it saw.
    const before = await follow(askId, undefined, 3);
    const after = await follow(askId, before[before.length - 1].id);
    expect(await running).toBe('finished');
    expect(before.map((e) => e.type)).not.toContain('done');
    const all = await events.readAll(askId);
    expect([...before, ...after]).toEqual(all);
    expect(deltasOf([...before, ...after]).join('')).toBe(answer);
    for (let i = 0; i < all.length; i++) {
      expect(await follow(askId, all[i].id)).toEqual(all.slice(i + 1));
    }
  });
});
