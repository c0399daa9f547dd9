/**
 * Client CPU of the calls every ask makes many times (where the pipeline's CPU per ask goes): one PostgreSQL statement through
 * TypeORM's `DataSource.query` against the same statement on the pool (`pgQuery`, unnamed and named),
 * one Redis round trip, and `redactSecrets` over an event's JSON with and without a secret in it.
 *
 *   node tools/run-ts.js bench/pipeline/per-call.bench.ts [--calls 2000]
 *
 * Each figure: `process.cpuUsage()` (user + system) over `--calls` sequential calls after 300 warm-up
 * calls, ÷ calls, in µs; wall time beside it. On a throwaway database on the local PostgreSQL and the
 * bench's own Redis server. Writes its section of bench/RESULTS.md. Nothing here asserts a time.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import Redis from 'ioredis';
import { redactSecrets, registerSecrets } from '@ask/ask-errors';
import { pgQuery } from '@ask/persistence';
import { createTestDatabase } from '@ask/persistence/testing';
import { type RedisServer, startRedis } from '@ask/stack';
import { gitCommit, machine, numberArg, writeResultsSection } from '../common';

const CALLS = numberArg('calls', 2000);
const WARMUP = 300;
const SECTION = '## Per-call client CPU (pipeline)';

interface Row {
  call: string;
  cpuUs: number;
  wallUs: number;
}

/** CPU µs and wall µs per call of `fn`, over CALLS calls after WARMUP. */
async function measure(call: string, fn: () => unknown): Promise<Row> {
  for (let i = 0; i < WARMUP; i += 1) await fn();
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < CALLS; i += 1) await fn();
  const used = process.cpuUsage(cpu);
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    call,
    cpuUs: round((used.user + used.system) / CALLS),
    wallUs: round(((performance.now() - started) * 1000) / CALLS),
  };
}

async function main(): Promise<void> {
  const load = loadavg();
  const db = await createTestDatabase();
  let redisServer: RedisServer | undefined;
  let redis: Redis | undefined;
  try {
    redisServer = await startRedis();
    redis = new Redis(redisServer.url);
    const sql = 'SELECT project_id, key_hash, revoked_at FROM api_keys WHERE prefix = $1';
    const rows: Row[] = [
      await measure('PostgreSQL: the key check through `DataSource.query` (TypeORM query runner)', () =>
        db.dataSource.query(sql, ['abcdefghijkl']),
      ),
      await measure('PostgreSQL: the same through `pgQuery`, unnamed (the pool)', () =>
        pgQuery(db.dataSource, sql, ['abcdefghijkl']),
      ),
      await measure('PostgreSQL: the same through `pgQuery`, named (prepared once per connection)', () =>
        pgQuery(db.dataSource, sql, ['abcdefghijkl'], 'bench_key_check'),
      ),
      await measure('Redis: one HGETALL round trip (ioredis)', () => redis?.hgetall('bench:absent')),
    ];
    registerSecrets(['ask_abcdefghijkl_' + 'x'.repeat(43), 'y'.repeat(43), 'zsecretzsecretzsecret']);
    const text = JSON.stringify({ text: 'PostgreSQL uses MVCC to handle concurrency. '.repeat(50) });
    rows.push(
      await measure(`redactSecrets: a ${text.length}-character event, no secret in it (3 secrets registered)`, () =>
        redactSecrets(text),
      ),
      await measure(`redactSecrets: the same event with one secret in it`, () =>
        redactSecrets(`${text}zsecretzsecretzsecret`),
      ),
    );
    const m = machine();
    writeResultsSection(
      SECTION,
      `${SECTION}

${new Date().toISOString()} · \`node tools/run-ts.js bench/pipeline/per-call.bench.ts${CALLS === 2000 ? '' : ` --calls ${CALLS}`}\` at commit ${gitCommit()} · ${m.nproc} CPUs (${m.cpuModel}) · Node ${m.node} · load average (1 min) ${load[0].toFixed(2)} at start, ${loadavg()[0].toFixed(2)} at end · throwaway database on the local PostgreSQL, the bench's own Redis server.

Client CPU (user + system, \`process.cpuUsage\`) per call over ${CALLS} sequential calls after ${WARMUP} warm-up calls; wall time beside it (it includes the server's work and, on this shared machine, the scheduler's wait). What each ask pays in each app per statement, round trip or published event (issue 19).

| Call | CPU µs per call | wall µs per call |
|---|---:|---:|
${rows.map((r) => `| ${r.call} | ${r.cpuUs} | ${r.wallUs} |`).join('\n')}
`,
    );
    console.log(rows.map((r) => `${r.cpuUs} µs CPU, ${r.wallUs} µs wall: ${r.call}`).join('\n'));
  } finally {
    redis?.disconnect();
    await redisServer?.close();
    await db.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
