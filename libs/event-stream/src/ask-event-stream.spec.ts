import { connectTestRedis } from '@ask/testing';
import { randomUUID } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';
import { AskEventStream } from './ask-event-stream';

// Integration: the machine's real Redis, with a per-run key prefix so nothing else is touched.
describe(AskEventStream.name, () => {
  const redis = connectTestRedis();
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
      await stream.publish(askId, 'done', {
        messageId: 'm',
        usage: { promptTokens: 1, completionTokens: 2 },
        sources: [],
      });
      const ttl = await redis.ttl(`${prefix}:ask:${askId}:events`);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(120);
    });
  });

  describe('open', () => {
    it('writes the meta and, given accepted, the first event in one transaction, returning its id', async () => {
      const askId = randomUUID();
      const id = await stream.open(
        askId,
        { projectId: 'p', sessionId: 's', acceptedAt: 'now' },
        { askId, sessionId: 's' },
      );
      expect(await stream.meta(askId)).toEqual({ projectId: 'p', sessionId: 's', acceptedAt: 'now' });
      expect(await stream.readAll(askId)).toEqual([{ id, type: 'accepted', data: { askId, sessionId: 's' } }]);
      expect(await redis.ttl(`${prefix}:ask:${askId}:events`)).toBeGreaterThan(120);
    });

    it('refuses the accepted event of a stream that already ended, as publish does', async () => {
      const askId = randomUUID();
      await stream.publish(askId, 'error', { status: 504, code: 'llm_upstream_error', error: 'late' });
      await expect(
        stream.open(askId, { projectId: 'p', sessionId: 's', acceptedAt: 'now' }, { askId, sessionId: 's' }),
      ).rejects.toMatchObject({ name: 'FencedPublishError', reason: 'ended' });
      expect((await stream.readAll(askId)).map((e) => e.type)).toEqual(['error']);
    });

    it('publishes on a fresh connection (the script sent as EVAL) and on its next ask (EVALSHA) alike', async () => {
      const own = connectTestRedis();
      const fresh = new AskEventStream(own, prefix, 120);
      try {
        for (const askId of [randomUUID(), randomUUID()]) {
          const id = await fresh.open(
            askId,
            { projectId: 'p', sessionId: 's', acceptedAt: 'now' },
            { askId, sessionId: 's' },
          );
          expect((await stream.readAll(askId)).map((e) => `${e.type} ${e.id}`)).toEqual([`accepted ${id}`]);
        }
      } finally {
        own.disconnect();
      }
    });
  });

  describe('hash tags (Redis Cluster)', () => {
    const tagged = new AskEventStream(redis, prefix, 120, 3);

    it('puts both keys of an ask under one of 3 hash tags, so its Lua scripts name one slot; claim and publish work as untagged', async () => {
      const askIds = Array.from({ length: 30 }, () => randomUUID());
      const tags = new Set<string>();
      for (const askId of askIds) {
        const key = tagged.streamKey(askId);
        const tag = /\{[^}]+\}/.exec(key)![0];
        tags.add(tag);
        expect(key).toBe(`${prefix}:ask:${tag}:${askId}:events`);
        expect(calculateSlot(key)).toBe(calculateSlot(`${prefix}:ask:${tag}:${askId}:meta`));
      }
      expect([...tags].sort()).toEqual([`{${prefix}:s0}`, `{${prefix}:s1}`, `{${prefix}:s2}`]);

      const askId = askIds[0];
      await tagged.open(askId, { projectId: 'p', sessionId: 's', acceptedAt: 'now' });
      const claim = (await tagged.claim(askId))!;
      expect(claim.run).toBe(1);
      const a = await tagged.publish(askId, 'accepted', { askId, sessionId: 's' }, claim);
      const b = await tagged.publish(
        askId,
        'done',
        { messageId: 'm', usage: { promptTokens: 1, completionTokens: 2 }, sources: [] },
        claim,
      );
      expect((await tagged.readAll(askId)).map((e) => `${e.type} ${e.id}`)).toEqual([`accepted ${a}`, `done ${b}`]);
      expect(await redis.exists(`${prefix}:ask:${askId}:events`)).toBe(0);
      expect(await tagged.meta(askId)).toEqual({ projectId: 'p', sessionId: 's', acceptedAt: 'now' });
    });
  });

  describe('meta', () => {
    it('returns null for an unknown ask', async () => {
      expect(await stream.meta(randomUUID())).toBeNull();
    });
  });
});
