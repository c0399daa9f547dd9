// After `npm test` (tools/test.sh): fails when keys under a spec's prefix (`<name>-<uuid>`,
// TEST_KEY_PREFIX in libs/testing) remain in the Redis of REDIS_URL: every spec removes what it wrote,
// as its throwaway databases are removed. Another test run on the same Redis at the same time shows
// here too. Usage: node tools/run-ts.js tools/check-redis-keys.ts
import Redis from 'ioredis';
import { loadConfig } from '@ask/config';
import { findTestKeys } from '@ask/testing';

async function main(): Promise<number> {
  const { REDIS_URL } = loadConfig();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const found = await findTestKeys(redis);
    const total = [...found.values()].reduce((a, b) => a + b, 0);
    if (total === 0) {
      console.log('test: no Redis keys left under a spec prefix');
      return 0;
    }
    console.error(`test: ${total} Redis keys left under ${found.size} spec prefixes (a spec did not remove them):`);
    for (const [prefix, count] of [...found].sort((a, b) => b[1] - a[1])) console.error(`  ${prefix}: ${count}`);
    return 1;
  } finally {
    redis.disconnect();
  }
}

main().then(
  (code) => process.exit(code),
  (err: Error) => {
    console.error(`test: could not check Redis for leftover keys: ${err.message}`);
    process.exit(1);
  },
);
