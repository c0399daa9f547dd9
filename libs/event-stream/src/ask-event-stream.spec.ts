import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { AskEventStream } from './ask-event-stream';

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

  describe('meta', () => {
    it('returns null for an unknown ask', async () => {
      expect(await stream.meta(randomUUID())).toBeNull();
    });
  });
});
