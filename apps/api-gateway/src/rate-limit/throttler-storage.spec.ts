import { randomUUID } from 'node:crypto';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import Redis from 'ioredis';
import { testRedisUrl } from '@ask/testing';
import { ScriptedThrottlerStorage } from './throttler-storage';

// Integration: the machine's real Redis, keys under a per-run prefix.
describe(ScriptedThrottlerStorage.name, () => {
  const url = testRedisUrl();
  const redis = new Redis(url);
  const prefix = `test-throttle-${randomUUID()}`;
  const storage = new ScriptedThrottlerStorage(redis);
  const library = new ThrottlerStorageRedisService(redis);

  afterAll(async () => {
    const keys = await redis.keys(`{${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  describe('increment', () => {
    it("answers the library's records, call for call, over a limit of 3 and a block", async () => {
      const calls = async (s: ThrottlerStorageRedisService, key: string) => {
        const records = [];
        for (let i = 0; i < 5; i += 1) records.push(await s.increment(key, 60_000, 3, 30_000, 'ask'));
        return records;
      };
      const ours = await calls(storage, `${prefix}:ours`);
      const theirs = await calls(library, `${prefix}:theirs`);
      expect(ours).toEqual(theirs);
      expect(ours.map((r) => [r.totalHits, r.isBlocked, r.timeToBlockExpire])).toEqual([
        [1, false, 0],
        [2, false, 0],
        [3, false, 0],
        [4, true, 30],
        [5, true, 30],
      ]);
      expect(ours.every((r) => r.timeToExpire === 60)).toBe(true);
    });

    it("keeps the library's keys, so gateways on either storage share one counter", async () => {
      const key = `${prefix}:shared`;
      await library.increment(key, 60_000, 10, 60_000, 'ask');
      expect((await storage.increment(key, 60_000, 10, 60_000, 'ask')).totalHits).toBe(2);
      expect((await redis.keys(`{${key}:ask}:*`)).sort()).toEqual([`{${key}:ask}:hits`]);
      expect(await redis.get(`{${key}:ask}:hits`)).toBe('2');
    });

    it('sends the script by hash (EVALSHA), not the script itself, once the server knows it', async () => {
      const own = new Redis(url);
      try {
        const ownStorage = new ScriptedThrottlerStorage(own);
        await ownStorage.increment(`${prefix}:sha`, 60_000, 10, 60_000, 'ask'); // loads it if Redis did not know it
        const writes = jest.spyOn(own.stream, 'write');
        for (let i = 0; i < 3; i += 1) await ownStorage.increment(`${prefix}:sha`, 60_000, 10, 60_000, 'ask');
        const sent = writes.mock.calls.map(([data]) => String(data));
        expect(sent).toHaveLength(3);
        expect(sent.every((data) => /\r\nevalsha\r\n/i.test(data) && !data.includes('redis.call'))).toBe(true);
        expect(await own.get(`{${prefix}:sha:ask}:hits`)).toBe('4');
      } finally {
        own.disconnect();
      }
    });
  });
});
