import type Redis from 'ioredis';
import { assertNoEviction, RedisEvictionPolicyError } from './redis-policy';

/** A connection whose INFO memory answers with `policy` (a real server's reply format, CRLF lines). */
const serverWith = (policy: string) =>
  ({ info: async () => `# Memory\r\nused_memory:1024\r\nmaxmemory:0\r\nmaxmemory_policy:${policy}\r\nallocator_frag_ratio:1.0\r\n` }) as unknown as Redis;

describe(assertNoEviction.name, () => {
  it('accepts noeviction', async () => {
    await expect(assertNoEviction(serverWith('noeviction'))).resolves.toBeUndefined();
  });

  it.each(['allkeys-lru', 'volatile-lru', 'allkeys-lfu', 'volatile-ttl', 'allkeys-random'])('refuses %s, naming the setting and the fix', async (policy) => {
    const err = await assertNoEviction(serverWith(policy)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RedisEvictionPolicyError);
    expect((err as Error).message).toContain(`Redis maxmemory-policy is ${policy}`);
    expect((err as Error).message).toContain('maxmemory-policy noeviction');
  });
});
