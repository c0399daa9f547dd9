import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { loadConfig } from '@ask/config';

/**
 * The form of a spec's Redis key prefix: a lowercase name, a dash and a random UUID
 * (`e2e-1b4e28ba-2fa1-4d2b-883f-0016d3cca427`), as {@link testKeyPrefix} makes and as the specs'
 * `${name}-${randomUUID()}` prefixes already are. The service's own prefix (`ask-service` by default)
 * never has this form, so a key whose first segment matches was written by a spec.
 */
export const TEST_KEY_PREFIX =
  /^\{?([a-z][a-z0-9-]*-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\}?(:|$)/;

/** A fresh key prefix for one spec (`<name>-<uuid>`, {@link TEST_KEY_PREFIX}); `name` is lowercase letters, digits and dashes. */
export function testKeyPrefix(name: string): string {
  return `${name}-${randomUUID()}`;
}

/** `text` with Redis glob characters (`* ? [ ] \`) escaped, for a SCAN MATCH pattern. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

/**
 * Removes every key under `prefix` (`prefix:*` and `prefix` itself, and the hash-tag forms
 * `{prefix}…` and `{prefix:…}…`, as the rate limiter's `{prefix:rate:…}:hits`) with SCAN + UNLINK, in batches of up to 1,000 keys: what a spec wrote
 * there, BullMQ's queue meta and job hashes included. `redis` is a client (left open) or a URL (a
 * client is opened and closed here). Returns the number of keys removed.
 * @throws the client's error when Redis cannot be reached.
 */
export async function removeKeysUnder(redis: Redis | string, prefix: string): Promise<number> {
  if (!prefix) throw new Error('removeKeysUnder: an empty prefix would match every key');
  const client = typeof redis === 'string' ? new Redis(redis, { lazyConnect: true, maxRetriesPerRequest: 1 }) : redis;
  // A server that is down rejects the first command (after one retry); ioredis would also print it.
  if (typeof redis === 'string') client.on('error', () => undefined);
  let removed = 0;
  try {
    for (const pattern of [globEscape(prefix), `${globEscape(prefix)}:*`, `{${globEscape(prefix)}[:}]*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) removed += await client.unlink(...keys);
      } while (cursor !== '0');
    }
  } finally {
    if (typeof redis === 'string') client.disconnect();
  }
  return removed;
}

/**
 * Every key of the client's database whose first segment has the form of a spec's prefix
 * ({@link TEST_KEY_PREFIX}), counted per prefix: `{ 'e2e-1b4e…': 42 }`. Empty when no spec left a key.
 */
export async function findTestKeys(redis: Redis): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const prefix = TEST_KEY_PREFIX.exec(key)?.[1];
      if (prefix) found.set(prefix, (found.get(prefix) ?? 0) + 1);
    }
  } while (cursor !== '0');
  return found;
}

/**
 * Removes the keys a stack of apps wrote ({@link removeKeysUnder}), reading its Redis URL and key
 * prefix from the environment it was started with (`REDIS_URL`, `ASK_KEY_PREFIX` through libs/config).
 * Call it after the stack has stopped, or its workers write again. Returns the number of keys removed.
 * @throws Error when the prefix is not of a spec's form ({@link TEST_KEY_PREFIX}): the service's own
 *   keys (`ask-service`) are never removed here.
 */
export async function removeTestKeys(env: NodeJS.ProcessEnv): Promise<number> {
  const { REDIS_URL, ASK_KEY_PREFIX } = loadConfig(env);
  if (!TEST_KEY_PREFIX.test(ASK_KEY_PREFIX))
    throw new Error(`removeTestKeys: ${ASK_KEY_PREFIX} is not a spec's prefix (<name>-<uuid>); nothing removed`);
  return removeKeysUnder(REDIS_URL, ASK_KEY_PREFIX);
}
