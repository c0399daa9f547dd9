import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { findTestKeys, removeKeysUnder, removeTestKeys, TEST_KEY_PREFIX, testKeyPrefix } from './redis-keys';

const URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0';

describe(removeKeysUnder.name, () => {
  const redis = new Redis(URL);
  const mine = testKeyPrefix('redis-keys');
  const other = testKeyPrefix('redis-keys-other');

  afterAll(async () => {
    await removeKeysUnder(redis, mine);
    await removeKeysUnder(redis, other);
    redis.disconnect();
  });

  it('removes what a spec and its BullMQ queue wrote under the prefix, and nothing of another prefix', async () => {
    await redis.set(`${mine}:plain`, '1');
    await redis.xadd(`${mine}:ask:a:events`, '*', 'type', 'done');
    await redis.set(`{${mine}}:tagged`, '1');
    await redis.set(`{${mine}:rate:ask:project:p:ask}:hits`, '1');
    await redis.set(`${other}:plain`, '1');
    const queue = new Queue('redis-keys-spec', { connection: { url: URL }, prefix: mine });
    await queue.add('job', { n: 1 });
    await queue.add('job', { n: 2 });
    await queue.close();
    const written = (await redis.keys(`${mine}:*`)).length + 2; // + the two hash-tag keys
    expect(written).toBeGreaterThan(4); // BullMQ's meta, id counter, wait list, events and 2 job hashes

    expect(await removeKeysUnder(URL, mine)).toBe(written);
    expect(await redis.keys(`${mine}*`)).toEqual([]);
    expect(await redis.keys(`{${mine}*`)).toEqual([]);
    expect(await redis.keys(`${other}*`)).toEqual([`${other}:plain`]);
  });

  it('refuses an empty prefix, which would match every key', async () => {
    await expect(removeKeysUnder(redis, '')).rejects.toThrow('empty prefix');
  });
});

describe(findTestKeys.name, () => {
  const redis = new Redis(URL);
  const prefix = testKeyPrefix('find-test-keys');

  afterAll(async () => {
    await removeKeysUnder(redis, prefix);
    await redis.del('ask-service:find-test-keys-spec');
    redis.disconnect();
  });

  it("counts a spec's keys per prefix and never the service's own prefix", async () => {
    await redis.set(`${prefix}:a`, '1');
    await redis.set(`${prefix}:b:c`, '1');
    await redis.set(`{${prefix}}:d`, '1');
    await redis.set('ask-service:find-test-keys-spec', '1');
    const found = await findTestKeys(redis);
    expect(found.get(prefix)).toBe(3);
    expect([...found.keys()].some((p) => p.startsWith('ask-service'))).toBe(false);
  });
});

describe('TEST_KEY_PREFIX', () => {
  it.each([
    ['e2e-1b4e28ba-2fa1-4d2b-883f-0016d3cca427:queue:meta', 'e2e-1b4e28ba-2fa1-4d2b-883f-0016d3cca427'],
    ['{trust-1b4e28ba-2fa1-4d2b-883f-0016d3cca427}:x', 'trust-1b4e28ba-2fa1-4d2b-883f-0016d3cca427'],
    ['ask-service:ask:1b4e28ba-2fa1-4d2b-883f-0016d3cca427:events', undefined],
    ['1b4e28ba-2fa1-4d2b-883f-0016d3cca427:x', undefined],
  ])('reads the prefix of %s as %s', (key, prefix) => {
    expect(TEST_KEY_PREFIX.exec(key)?.[1]).toBe(prefix);
  });
});

describe(removeTestKeys.name, () => {
  const redis = new Redis(URL);
  const prefix = testKeyPrefix('remove-test-keys');

  afterAll(async () => {
    await removeKeysUnder(redis, prefix);
    await redis.del('ask-service:remove-test-keys-spec');
    redis.disconnect();
  });

  it("removes the keys under a stack's ASK_KEY_PREFIX in its REDIS_URL", async () => {
    await redis.set(`${prefix}:a`, '1');
    await redis.set(`${prefix}:b`, '1');
    expect(await removeTestKeys({ REDIS_URL: URL, ASK_KEY_PREFIX: prefix })).toBe(2);
    expect(await redis.exists(`${prefix}:a`, `${prefix}:b`)).toBe(0);
  });

  it("refuses the service's own prefix and leaves its keys", async () => {
    await redis.set('ask-service:remove-test-keys-spec', '1');
    await expect(removeTestKeys({ REDIS_URL: URL, ASK_KEY_PREFIX: 'ask-service' })).rejects.toThrow(
      "ask-service is not a spec's prefix",
    );
    expect(await redis.exists('ask-service:remove-test-keys-spec')).toBe(1);
  });
});
