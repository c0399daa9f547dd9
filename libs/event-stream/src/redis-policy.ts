import type { RedisClient } from './redis-connections';

/** The Redis server evicts keys under memory pressure: jobs and event streams of accepted asks would vanish. */
export class RedisEvictionPolicyError extends Error {
  constructor(readonly policy: string) {
    super(
      `Redis maxmemory-policy is ${policy}; the Ask service needs maxmemory-policy noeviction, because an evicted ` +
        'job or event stream silently loses an accepted ask (BullMQ requires it too). Set `maxmemory-policy noeviction` ' +
        'in redis.conf (or CONFIG SET maxmemory-policy noeviction) and start again.',
    );
    this.name = 'RedisEvictionPolicyError';
  }
}

/** Neither `INFO memory` nor `CONFIG GET` told the server's maxmemory-policy: the app cannot know it is safe. */
export class RedisPolicyUnknownError extends Error {
  constructor(readonly why: string) {
    super(
      `Redis maxmemory-policy could not be read (${why}); the Ask service needs maxmemory-policy noeviction and ` +
        'refuses to start unverified. Allow INFO (or CONFIG GET) for this user, or use a server that reports maxmemory_policy in INFO memory.',
    );
    this.name = 'RedisPolicyUnknownError';
  }
}

/**
 * The server's `maxmemory-policy`: from `INFO memory`'s `maxmemory_policy` line first (managed Redis
 * such as ElastiCache or Memorystore disables CONFIG but answers INFO), else from
 * `CONFIG GET maxmemory-policy`; `undefined` when neither answers.
 * @returns the policy (e.g. `noeviction`, `allkeys-lru`) and, when unknown, why.
 */
export async function readEvictionPolicy(redis: RedisClient): Promise<{ policy?: string; why?: string }> {
  const reasons: string[] = [];
  try {
    const policy = /^maxmemory_policy:(\S+)/m.exec(await redis.info('memory'))?.[1];
    if (policy) return { policy };
    reasons.push('INFO memory has no maxmemory_policy');
  } catch (err) {
    reasons.push(`INFO memory failed: ${(err as Error).message}`);
  }
  try {
    const reply = (await redis.config('GET', 'maxmemory-policy')) as unknown as string[];
    if (reply?.[1]) return { policy: reply[1] };
    reasons.push('CONFIG GET maxmemory-policy answered nothing');
  } catch (err) {
    reasons.push(`CONFIG GET failed: ${(err as Error).message}`);
  }
  return { why: reasons.join('; ') };
}

/**
 * Refuses a Redis that may evict keys: resolves only when its `maxmemory-policy` is `noeviction`
 * (read by {@link readEvictionPolicy}). Called once at boot by every app, before any BullMQ queue or
 * worker exists (AskQueuesModule's connection factory), so an app refused has taken no job.
 * @throws RedisEvictionPolicyError naming the setting when it is another policy.
 * @throws RedisPolicyUnknownError when the policy cannot be read at all (the app does not start unverified).
 */
export async function assertNoEviction(redis: RedisClient): Promise<void> {
  const { policy, why } = await readEvictionPolicy(redis);
  if (policy === undefined) throw new RedisPolicyUnknownError(why ?? 'no answer');
  if (policy !== 'noeviction') throw new RedisEvictionPolicyError(policy);
}
