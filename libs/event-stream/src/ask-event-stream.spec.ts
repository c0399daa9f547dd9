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

  describe('meta', () => {
    it('returns null for an unknown ask', async () => {
      expect(await stream.meta(randomUUID())).toBeNull();
    });
  });
});
