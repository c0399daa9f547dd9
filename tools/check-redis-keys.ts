// `npm test` (tools/test.sh) calls this twice, around its jest run:
//   --record FILE   before: writes the spec prefixes (`<name>-<uuid>`, TEST_KEY_PREFIX in libs/testing)
//                   that already hold keys in the Redis of REDIS_URL, one per line (an earlier run that
//                   was killed, a bench, another checkout's run), and says how many;
//   --since FILE    after: fails when a spec prefix not in FILE holds keys: every spec removes what it
//                   wrote, as its throwaway databases are removed. Prefixes in FILE are named, not failed.
// Without an option every spec prefix counts. Another test run on the same Redis at the same time
// shows here too. Usage: node tools/run-ts.js tools/check-redis-keys.ts [--record FILE | --since FILE]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import Redis from 'ioredis';
import { loadConfig } from '@ask/config';
import { findTestKeys } from '@ask/testing';

function option(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
}

async function main(): Promise<number> {
  const { REDIS_URL } = loadConfig();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  try {
    const found = await findTestKeys(redis);
    const record = option('--record');
    if (record) {
      mkdirSync(dirname(record), { recursive: true });
      writeFileSync(record, [...found.keys()].map((p) => `${p}\n`).join(''));
      if (found.size > 0)
        console.log(
          `test: ${found.size} spec prefixes already hold keys in Redis before this run (not counted after it)`,
        );
      return 0;
    }
    const since = option('--since');
    const before = new Set(since ? readFileSync(since, 'utf8').split('\n').filter(Boolean) : []);
    const left = [...found].filter(([prefix]) => !before.has(prefix));
    const earlier = found.size - left.length;
    const total = left.reduce((sum, [, count]) => sum + count, 0);
    if (total === 0) {
      const note = earlier > 0 ? ` (${earlier} prefixes from before the run still hold keys)` : '';
      console.log(`test: this run left no Redis keys under a spec prefix${note}`);
      return 0;
    }
    console.error(`test: ${total} Redis keys left under ${left.length} spec prefixes (a spec did not remove them):`);
    for (const [prefix, count] of left.sort((a, b) => b[1] - a[1])) console.error(`  ${prefix}: ${count}`);
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
