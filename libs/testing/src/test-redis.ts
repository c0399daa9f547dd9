import Redis, { type RedisOptions } from 'ioredis';

/** The Redis that specs share: `REDIS_URL`, else the machine's own (`redis://127.0.0.1:6379/0`). */
export function testRedisUrl(): string {
  return process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';
}

/**
 * A client of the specs' Redis ({@link testRedisUrl}). The caller disconnects it and removes the keys
 * it wrote under its own prefix (`removeKeysUnder`).
 */
export function connectTestRedis(options: RedisOptions = {}): Redis {
  return new Redis(testRedisUrl(), options);
}
