import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { AskEventStream, FencedPublishError } from './ask-event-stream';

// Integration: the machine's real Redis, with a per-run key prefix so nothing else is touched.
describe(AskEventStream.name, () => {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0');
  const prefix = `test-${randomUUID()}`;
  const stream = new AskEventStream(redis, prefix, 120);

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  describe('publish', () => {
    it('appends events that read back in order with their stream ids', async () => {
      const askId = randomUUID();
      const a = await stream.publish(askId, 'accepted', { askId, sessionId: 's1' });
      const b = await stream.publish(askId, 'delta', { text: 'Hello' });
      const events = await stream.readAll(askId);
      expect(events).toEqual([
        { id: a, type: 'accepted', data: { askId, sessionId: 's1' } },
        { id: b, type: 'delta', data: { text: 'Hello' } },
      ]);
    });

    it('sets the expiry of the ask keys on the terminal event', async () => {
      const askId = randomUUID();
      await stream.open(askId, { projectId: 'p', sessionId: 's', acceptedAt: 'now' });
      await stream.publish(askId, 'done', { messageId: 'm', usage: { promptTokens: 1, completionTokens: 2 }, sources: [] });
      const ttl = await redis.ttl(`${prefix}:ask:${askId}:events`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(120);
    });
  });

  describe('read', () => {
    it('resumes after Last-Event-ID with no gap and no repeat, and ends on done', async () => {
      const askId = randomUUID();
      const ids: string[] = [];
      for (const word of ['one ', 'two ', 'three ']) ids.push(await stream.publish(askId, 'delta', { text: word }));
      const seen: string[] = [];
      const reading = (async () => {
        for await (const event of stream.read(askId, { after: ids[0], blockMs: 200 })) {
          seen.push(event.type === 'delta' ? (event.data as { text: string }).text : event.type);
        }
      })();
      await stream.publish(askId, 'delta', { text: 'four' });
      await stream.publish(askId, 'done', { messageId: 'm', usage: { promptTokens: null, completionTokens: null }, sources: [] });
      await reading;
      expect(seen).toEqual(['two ', 'three ', 'four', 'done']);
    });

    it('stops when the signal aborts', async () => {
      const askId = randomUUID();
      const controller = new AbortController();
      const seen: string[] = [];
      const reading = (async () => {
        for await (const event of stream.read(askId, { signal: controller.signal, blockMs: 100 })) seen.push(event.type);
      })();
      await stream.publish(askId, 'accepted', { askId, sessionId: 's' });
      await new Promise((r) => setTimeout(r, 150));
      controller.abort();
      await reading;
      expect(seen).toEqual(['accepted']);
    });

    it('ignores a malformed Last-Event-ID and reads from the start', async () => {
      const askId = randomUUID();
      await stream.publish(askId, 'accepted', { askId, sessionId: 's' });
      await stream.publish(askId, 'error', { status: 500, code: 'internal_error', error: 'x' });
      const seen: string[] = [];
      for await (const event of stream.read(askId, { after: '$; FLUSHALL', blockMs: 100 })) seen.push(event.type);
      expect(seen).toEqual(['accepted', 'error']);
    });
  });

  describe('read until the deadline', () => {
    it('returns at the deadline when no terminal event comes', async () => {
      const askId = randomUUID();
      await stream.publish(askId, 'accepted', { askId, sessionId: 's' });
      const seen: string[] = [];
      for await (const event of stream.read(askId, { blockMs: 5_000, deadlineAt: Date.now() + 300 })) seen.push(event.type);
      expect(seen).toEqual(['accepted']);
    });
  });

  describe('read after the terminal event', () => {
    it('ends at once when Last-Event-ID is the terminal event', async () => {
      const askId = randomUUID();
      await stream.publish(askId, 'delta', { text: 'x' });
      const doneId = await stream.publish(askId, 'done', { messageId: 'm', usage: { promptTokens: 1, completionTokens: 1 }, sources: [] });
      const seen: string[] = [];
      for await (const event of stream.read(askId, { after: doneId, blockMs: 10_000 })) seen.push(event.type);
      expect(seen).toEqual([]);
    });
  });

  describe('claim and fenced publish', () => {
    const meta = { projectId: 'p', sessionId: 's', acceptedAt: 'now' };
    const done = { messageId: 'm', usage: { promptTokens: 1, completionTokens: 1 }, sources: [] };

    it('numbers the runs of an ask and fences every earlier run: its publish writes nothing', async () => {
      const askId = randomUUID();
      await stream.open(askId, meta);
      const first = await stream.claim(askId);
      await stream.publish(askId, 'delta', { text: 'one ' }, first!);
      const second = await stream.claim(askId);
      expect([first?.run, second?.run]).toEqual([1, 2]);
      await expect(stream.publish(askId, 'delta', { text: 'stale ' }, first!)).rejects.toEqual(new FencedPublishError(askId, 'superseded'));
      await expect(stream.isCurrent(first!)).resolves.toBe(false);
      await stream.publish(askId, 'delta', { text: 'two' }, second!);
      expect((await stream.readAll(askId)).map((e) => (e.data as { text: string }).text)).toEqual(['one ', 'two']);
    });

    it('refuses any event after the terminal one, with or without a claim', async () => {
      const askId = randomUUID();
      await stream.open(askId, meta);
      const claim = await stream.claim(askId);
      await stream.publish(askId, 'done', done, claim!);
      await expect(stream.publish(askId, 'delta', { text: 'late' }, claim!)).rejects.toMatchObject({ reason: 'ended' });
      await expect(stream.publish(askId, 'error', { status: 504, code: 'llm_upstream', error: 'late' })).rejects.toMatchObject({ reason: 'ended' });
      await expect(stream.isCurrent(claim!)).resolves.toBe(false);
      expect((await stream.readAll(askId)).map((e) => e.type)).toEqual(['done']);
    });

    it('gives no claim for an ask whose meta is gone, and refuses a claim once the meta is gone', async () => {
      const askId = randomUUID();
      expect(await stream.claim(askId)).toBeNull();
      await stream.open(askId, meta);
      const claim = await stream.claim(askId);
      await redis.del(`${prefix}:ask:${askId}:meta`);
      await expect(stream.publish(askId, 'delta', { text: 'x' }, claim!)).rejects.toMatchObject({ reason: 'superseded' });
    });
  });

  describe('meta', () => {
    it('returns null for an unknown ask', async () => {
      expect(await stream.meta(randomUUID())).toBeNull();
    });
  });
});
