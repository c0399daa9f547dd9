import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type Redis from 'ioredis';

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

/**
 * Reads the server's `maxmemory_policy` from `INFO memory` (works where CONFIG is disabled, as on
 * managed Redis).
 * @throws RedisEvictionPolicyError naming the setting when it is not `noeviction`.
 */
export async function assertNoEviction(redis: Redis): Promise<void> {
  const info = await redis.info('memory');
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (policy !== undefined && policy !== 'noeviction') throw new RedisEvictionPolicyError(policy);
}

/** Injection token of the Redis connection the boot check reads (the events connection). */
export const POLICY_CHECK_REDIS = Symbol('POLICY_CHECK_REDIS');

/** Refuses to boot an app against a Redis that may evict keys (see {@link assertNoEviction}). */
@Injectable()
export class RedisPolicyCheck implements OnModuleInit {
  constructor(@Inject(POLICY_CHECK_REDIS) private readonly redis: Redis) {}

  async onModuleInit(): Promise<void> {
    await assertNoEviction(this.redis);
  }
}
