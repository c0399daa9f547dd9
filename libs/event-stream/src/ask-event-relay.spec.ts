import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import type { AskEvent } from '@ask/ask-contracts';
import { AskError } from '@ask/ask-errors';
import { testRedisUrl } from '@ask/testing';
import { AskEventRelay } from './ask-event-relay';
import { AskEventStream } from './ask-event-stream';
import { publishErrorUnlessEnded } from './deadline-publish';
import { StreamHub } from './stream-hub';

// Integration: the machine's real Redis, with a per-run key prefix.
describe(AskEventRelay.name, () => {
  const url = testRedisUrl();
  const redis = new Redis(url);
  const prefix = `test-relay-${randomUUID()}`;
  const events = new AskEventStream(redis, prefix, 120);
  const hub = new StreamHub({ control: redis, readers: 1, connect: () => new Redis(url, { maxRetriesPerRequest: 0 }) });
  const relay = new AskEventRelay(redis, hub, events, 120);
  const usage = { promptTokens: 1, completionTokens: 1 };

  afterAll(async () => {
    await hub.close();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  /** Relays to a list; resolves the events and how the relay ended. */
  const collect = async (askId: string, lastEventId?: string, deadlineAt?: number) => {
    const seen: AskEvent[] = [];
    const start = await relay.resumePoint(askId, lastEventId);
    const end = await relay.relay(askId, start, {
      signal: new AbortController().signal,
      deadlineAt,
      write: (batch) => void seen.push(...batch),
    });
    return { seen, end };
  };
  const rejection = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (err: AskError) => `${err.status} ${err.code} ${err.details}`,
    );

  describe('resumePoint', () => {
    it('rejects ids Redis would refuse, ids past the last event and ids of no event, with a typed 400', async () => {
      const askId = randomUUID();
      const accepted = await events.publish(askId, 'accepted', { askId, sessionId: 's' });
      const [ms, seq] = accepted.split('-');
      expect(await rejection(relay.resumePoint(askId, '99999999999999999999-0'))).toBe(
        '400 invalid_request Last-Event-ID: must be an event id of this stream (like 1718000000000-0) or absent',
      );
      expect(await rejection(relay.resumePoint(askId, `${BigInt(ms) + 1n}-0`))).toBe(
        '400 invalid_request Last-Event-ID: later than the last event of this stream',
      );
      expect(await rejection(relay.resumePoint(askId, `${ms}-${Number(seq) + 1}`))).toBe(
        '400 invalid_request Last-Event-ID: later than the last event of this stream',
      );
      expect(await rejection(relay.resumePoint(askId, '5-0'))).toBe(
        '400 invalid_request Last-Event-ID: not the id of an event of this stream',
      );
      expect(await relay.resumePoint(askId, accepted)).toEqual({ after: accepted, ended: false, backlog: [] });
      const delta = await events.publish(askId, 'delta', { text: 'x' });
      expect(await relay.resumePoint(askId, accepted)).toEqual({
        after: accepted,
        ended: false,
        backlog: [[delta, ['type', 'delta', 'data', '{"text":"x"}']]],
      });
      expect((await relay.resumePoint(askId, undefined)).backlog?.map(([id]) => id)).toEqual([accepted, delta]);
    });

    it('resumes an id of a stream Redis lost from the start of the rebuilt one (first entry reset); an empty stream from the start', async () => {
      const askId = randomUUID();
      const lostId = '1700000000000-3';
      expect(await relay.resumePoint(askId, lostId)).toEqual({ after: '0', ended: false, backlog: [] });
      const reset = await events.publish(askId, 'reset', {
        attempt: 0,
        reason: 'the ask was lost from Redis and runs again',
      });
      const retrieved = await events.publish(askId, 'delta', { text: 'y' });
      expect((await relay.resumePoint(askId, lostId)).backlog?.map(([id]) => id)).toEqual([reset, retrieved]);
      expect((await relay.resumePoint(askId, lostId)).after).toBe('0');
      const [ms] = retrieved.split('-');
      expect(await rejection(relay.resumePoint(askId, `${BigInt(ms) + 1n}-0`))).toBe(
        '400 invalid_request Last-Event-ID: later than the last event of this stream',
      );
      expect(await relay.resumePoint(askId, reset)).toEqual({
        after: reset,
        ended: false,
        backlog: [[retrieved, ['type', 'delta', 'data', '{"text":"y"}']]],
      });
    });
  });

  describe('metaAndResumePoint', () => {
    /** A connection of its own, so that its socket writes are the call's only. */
    const own = new Redis(url);
    const ownRelay = new AskEventRelay(own, hub, new AskEventStream(own, prefix, 120), 120);
    afterAll(() => own.disconnect());
    const outcome = (point: Promise<unknown>) =>
      point.then(
        (value) => ({ value }),
        (err: AskError) => `${err.status} ${err.code} ${err.details}`,
      );

    it('answers what meta and resumePoint answer, for every kind of Last-Event-ID, in one socket write', async () => {
      const askId = randomUUID();
      const meta = { projectId: randomUUID(), sessionId: randomUUID(), acceptedAt: new Date().toISOString() };
      const accepted = (await events.open(askId, meta, { askId, sessionId: meta.sessionId })) as string;
      const delta = await events.publish(askId, 'delta', { text: 'x' });
      const done = await events.publish(askId, 'done', { messageId: 'm', usage, sources: [] });
      const [ms] = done.split('-');
      await own.ping();
      const writes = jest.spyOn(own.stream, 'write');
      for (const lastEventId of [undefined, '', accepted, delta, done, '5-0', `${BigInt(ms) + 1n}-0`]) {
        writes.mockClear();
        const both = await ownRelay.metaAndResumePoint(askId, lastEventId);
        expect(writes).toHaveBeenCalledTimes(1);
        expect(both.meta).toEqual(meta);
        expect(both.meta).toEqual(await events.meta(askId));
        expect(await outcome(both.resumePoint())).toEqual(await outcome(relay.resumePoint(askId, lastEventId)));
      }
      writes.mockRestore();
      expect((await (await ownRelay.metaAndResumePoint(askId, done)).resumePoint()).ended).toBe(true);
    });

    it('answers a null meta and an empty start for an unknown ask; a malformed id is a typed 400', async () => {
      const askId = randomUUID();
      const both = await ownRelay.metaAndResumePoint(askId, undefined);
      expect(both.meta).toBeNull();
      expect(await both.resumePoint()).toEqual({ after: '0', ended: false, backlog: [] });
      expect(await rejection(ownRelay.metaAndResumePoint(askId, 'x-1'))).toBe(
        '400 invalid_request Last-Event-ID: must be an event id of this stream (like 1718000000000-0) or absent',
      );
    });
  });

  describe('relay', () => {
    it('replays from the start, then follows live events to the terminal one', async () => {
      const askId = randomUUID();
      const a = await events.publish(askId, 'accepted', { askId, sessionId: 's' });
      const reading = collect(askId);
      await new Promise((r) => setTimeout(r, 50));
      const d = await events.publish(askId, 'delta', { text: 'hi' });
      const done = await events.publish(askId, 'done', { messageId: 'm', usage, sources: [] });
      const { seen, end } = await reading;
      expect(seen.map((e) => `${e.id} ${e.type}`)).toEqual([`${a} accepted`, `${d} delta`, `${done} done`]);
      expect(end).toEqual({ reason: 'terminal' });
    });

    it('resumes after done past the deadline: nothing sent, nothing published, however often', async () => {
      const askId = randomUUID();
      await events.publish(askId, 'accepted', { askId, sessionId: 's' });
      const done = await events.publish(askId, 'done', { messageId: 'm', usage, sources: [] });
      for (let i = 0; i < 3; i++) {
        const { seen, end } = await collect(askId, done, Date.now() - 60_000);
        expect(seen).toEqual([]);
        expect(end).toEqual({ reason: 'terminal' });
      }
      expect((await events.readAll(askId)).map((e) => e.type)).toEqual(['accepted', 'done']);
    });

    it('ends an ask past its deadline with one 504, relayed with its stream id; a reconnect replays that same event', async () => {
      const askId = randomUUID();
      const a = await events.publish(askId, 'accepted', { askId, sessionId: 's' });
      const first = await collect(askId, undefined, Date.now() - 1);
      const stored = await events.readAll(askId);
      expect(stored.map((e) => e.type)).toEqual(['accepted', 'error']);
      expect(first.seen).toEqual(stored);
      expect(stored[1].data).toEqual({
        status: 504,
        code: 'llm_upstream',
        error: 'the llm provider did not answer in time',
        details: 'the ask passed its deadline without an answer',
      });
      const again = await collect(askId, a, Date.now() - 1);
      expect(again.seen).toEqual([stored[1]]);
      expect((await events.readAll(askId)).length).toBe(2);
    });

    it('holds the catch-up read while the writer has not drained, and pages through long streams in order', async () => {
      const askId = randomUUID();
      const pipeline = redis.pipeline();
      for (let i = 0; i < 1_203; i++)
        pipeline.xadd(events.streamKey(askId), '*', 'type', 'delta', 'data', JSON.stringify({ text: String(i) }));
      await pipeline.exec();
      await events.publish(askId, 'done', { messageId: 'm', usage, sources: [] });
      const batches: number[] = [];
      const texts: string[] = [];
      const end = await relay.relay(
        askId,
        { after: '0', ended: false },
        {
          signal: new AbortController().signal,
          write: async (batch) => {
            batches.push(batch.length);
            for (const e of batch) texts.push(e.type === 'delta' ? (e.data as { text: string }).text : e.type);
            await new Promise((r) => setTimeout(r, 5));
          },
        },
      );
      expect(end).toEqual({ reason: 'terminal' });
      expect(batches).toEqual([500, 500, 204]);
      expect(texts).toEqual([...Array.from({ length: 1_203 }, (_, i) => String(i)), 'done']);
    });

    it('shrinks catch-up pages to about pageBytes when entries are large, marks them catch-up, in order', async () => {
      // Issue 25 item 4: 510 deltas of 8,192 characters and pageBytes 32,768: after the first page (500,
      // read with the resume point) pages of 3 entries (32,768 / 8,216 characters of fields, the largest).
      const askId = randomUUID();
      const text = (i: number) => String.fromCharCode(97 + (i % 26)).repeat(8_192);
      const pipeline = redis.pipeline();
      for (let i = 0; i < 510; i++)
        pipeline.xadd(events.streamKey(askId), '*', 'type', 'delta', 'data', JSON.stringify({ text: text(i) }));
      await pipeline.exec();
      await events.publish(askId, 'done', { messageId: 'm', usage, sources: [] });
      const batches: string[] = [];
      let answer = '';
      const end = await relay.relay(askId, await relay.resumePoint(askId, undefined), {
        signal: new AbortController().signal,
        pageBytes: 32_768,
        write: async (batch, phase) => {
          batches.push(`${phase} ${batch.length}`);
          for (const e of batch) if (e.type === 'delta') answer += (e.data as { text: string }).text;
        },
      });
      expect(end).toEqual({ reason: 'terminal' });
      expect(batches).toEqual(['catch-up 500', 'catch-up 3', 'catch-up 3', 'catch-up 3', 'catch-up 2']);
      expect(answer).toBe(Array.from({ length: 510 }, (_, i) => text(i)).join(''));
    });

    it('stops on the signal', async () => {
      const askId = randomUUID();
      await events.publish(askId, 'accepted', { askId, sessionId: 's' });
      const controller = new AbortController();
      const seen: string[] = [];
      const ending = relay.relay(
        askId,
        { after: '0', ended: false },
        { signal: controller.signal, write: (b) => void seen.push(...b.map((e) => e.type)) },
      );
      await new Promise((r) => setTimeout(r, 50));
      controller.abort();
      expect(await ending).toEqual({ reason: 'aborted' });
      expect(seen).toEqual(['accepted']);
    });
  });

  describe(publishErrorUnlessEnded.name, () => {
    it('appends once, never after a terminal event, and never creates a stream', async () => {
      const error = { status: 504, code: 'llm_upstream', error: 'x' };
      const askId = randomUUID();
      await events.publish(askId, 'accepted', { askId, sessionId: 's' });
      const key = events.streamKey(askId);
      const first = await publishErrorUnlessEnded(redis, key, error, 120);
      expect(first.outcome).toBe('appended');
      expect(await publishErrorUnlessEnded(redis, key, error, 120)).toEqual({
        outcome: 'already-ended',
        id: (first as { id: string }).id,
      });
      const other = randomUUID();
      const done = await events.publish(other, 'done', { messageId: 'm', usage, sources: [] });
      expect(await publishErrorUnlessEnded(redis, events.streamKey(other), error, 120)).toEqual({
        outcome: 'already-ended',
        id: done,
      });
      expect(await publishErrorUnlessEnded(redis, events.streamKey(randomUUID()), error, 120)).toEqual({
        outcome: 'missing',
      });
      expect(await redis.exists(events.streamKey(randomUUID()))).toBe(0);
    });
  });
});
