import type { ThrottlerStorage } from '@nestjs/throttler';
import { ThrottlerStorageRedisService } from '@nest-lab/throttler-storage-redis';
import type Redis from 'ioredis';
import type { RedisClient } from '@ask/event-stream';

/** The record a throttler storage answers (the guard's view of one counter). */
type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** The command {@link ScriptedThrottlerStorage} defines on its connection. */
interface ThrottleCommand {
  askThrottle(
    hitKey: string,
    blockKey: string,
    throttlerName: string,
    ttl: number,
    limit: number,
    blockDuration: number,
  ): Promise<unknown>;
}

/**
 * `@nest-lab/throttler-storage-redis` with its counting script sent by hash: the library sends the
 * whole Lua script (877 bytes, as seen on the wire with strace) with `EVAL` on every call; here the same script is an ioredis command
 * (`defineCommand`), which sends `EVALSHA` and falls back to `EVAL` once when the server does not know
 * the script (a fresh or flushed Redis). Same keys (`{<key>:<name>}:hits` / `:blocked`), same
 * script, same record: counters are shared with gateways still on the library's own storage.
 */
export class ScriptedThrottlerStorage extends ThrottlerStorageRedisService {
  constructor(redis: RedisClient) {
    // The library takes either client (its keys carry one hash tag each, so the script runs on a Cluster).
    super(redis as Redis);
    const commands = redis as unknown as Partial<ThrottleCommand>;
    if (!commands.askThrottle) redis.defineCommand('askThrottle', { numberOfKeys: 2, lua: this.scriptSrc });
  }

  /**
   * Counts one hit of `key` for the throttler `throttlerName` (`ttl` and `blockDuration` in ms) and
   * answers the library's record (`timeToExpire` and `timeToBlockExpire` in whole seconds, rounded up).
   * @throws TypeError when the reply is not the script's four numbers; Redis errors as they come.
   */
  override async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const redis = this.redis as unknown as ThrottleCommand;
    const reply = await redis.askThrottle(
      `{${key}:${throttlerName}}:hits`,
      `{${key}:${throttlerName}}:blocked`,
      throttlerName,
      ttl,
      limit,
      blockDuration,
    );
    if (!Array.isArray(reply) || reply.length < 4 || !reply.slice(0, 4).every((n) => typeof n === 'number')) {
      throw new TypeError(`Expected the throttler script's four numbers, got ${JSON.stringify(reply)}`);
    }
    const [totalHits, timeToExpire, isBlocked, timeToBlockExpire] = reply as number[];
    return {
      totalHits,
      timeToExpire: Math.ceil(timeToExpire / 1000),
      isBlocked: isBlocked === 1,
      timeToBlockExpire: Math.ceil(timeToBlockExpire / 1000),
    };
  }
}
