import type Redis from 'ioredis';
import {
  assertNoEviction,
  readEvictionPolicy,
  RedisEvictionPolicyError,
  RedisPolicyUnknownError,
} from './redis-policy';

/** A connection whose INFO memory answers with `policy` (a real server's reply format, CRLF lines). */
const serverWith = (policy: string) =>
  ({
    info: async () =>
      `# Memory\r\nused_memory:1024\r\nmaxmemory:0\r\nmaxmemory_policy:${policy}\r\nallocator_frag_ratio:1.0\r\n`,
  }) as unknown as Redis;

/** A server whose INFO memory has no policy line (or fails), and whose CONFIG GET answers `config` (or fails). */
const serverWithout = (config: string[] | Error, info: string | Error = '# Memory\r\nused_memory:1024\r\n') =>
  ({
    info: async () => {
      if (info instanceof Error) throw info;
      return info;
    },
    config: async () => {
      if (config instanceof Error) throw config;
      return config;
    },
  }) as unknown as Redis;

describe(assertNoEviction.name, () => {
  it('accepts noeviction', async () => {
    await expect(assertNoEviction(serverWith('noeviction'))).resolves.toBeUndefined();
  });

  it.each(['allkeys-lru', 'volatile-lru', 'allkeys-lfu', 'volatile-ttl', 'allkeys-random'])(
    'refuses %s, naming the setting and the fix',
    async (policy) => {
      const err = await assertNoEviction(serverWith(policy)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RedisEvictionPolicyError);
      expect((err as Error).message).toContain(`Redis maxmemory-policy is ${policy}`);
      expect((err as Error).message).toContain('maxmemory-policy noeviction');
    },
  );

  it('refuses a server whose policy neither INFO nor CONFIG tells, naming both failures', async () => {
    const err = await assertNoEviction(serverWithout(new Error("ERR unknown command 'CONFIG'"))).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RedisPolicyUnknownError);
    expect((err as Error).message).toBe(
      "Redis maxmemory-policy could not be read (INFO memory has no maxmemory_policy; CONFIG GET failed: ERR unknown command 'CONFIG'); " +
        'the Ask service needs maxmemory-policy noeviction and refuses to start unverified. Allow INFO (or CONFIG GET) for this user, ' +
        'or use a server that reports maxmemory_policy in INFO memory.',
    );
  });
});

describe(readEvictionPolicy.name, () => {
  it('reads INFO memory first', async () => {
    expect(await readEvictionPolicy(serverWith('volatile-ttl'))).toEqual({ policy: 'volatile-ttl' });
  });

  it('falls back to CONFIG GET when INFO memory has no policy line', async () => {
    expect(await readEvictionPolicy(serverWithout(['maxmemory-policy', 'allkeys-lru']))).toEqual({
      policy: 'allkeys-lru',
    });
  });

  it('falls back to CONFIG GET when INFO fails', async () => {
    expect(await readEvictionPolicy(serverWithout(['maxmemory-policy', 'noeviction'], new Error('NOPERM')))).toEqual({
      policy: 'noeviction',
    });
  });
});
