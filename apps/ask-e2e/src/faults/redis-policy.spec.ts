/**
 * Boot refuses a Redis that may evict keys: each of the four apps, started as its own process against a
 * suite's own redis-server with `maxmemory-policy allkeys-lru`, exits with 1 and a message naming the
 * setting, having written nothing to that Redis (no queue, no job, no stream). Also where CONFIG is
 * disabled (as on managed Redis: the policy is read from INFO memory), and, as the control, the same
 * four apps with the same environment boot once the policy is noeviction.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import {
  APPS,
  type AppName,
  appCommand,
  freePort,
  redisCommand,
  type RedisServer,
  startRedis,
  startStack,
  type Stack,
} from '@ask/stack';

const ROOT = resolve(__dirname, '..', '..', '..', '..');
const REFUSAL =
  'Redis maxmemory-policy is allkeys-lru; the Ask service needs maxmemory-policy noeviction, because an evicted job or event stream ' +
  'silently loses an accepted ask (BullMQ requires it too). Set `maxmemory-policy noeviction` in redis.conf (or CONFIG SET ' +
  'maxmemory-policy noeviction) and start again.';

/** Runs one app to its exit (at most 90 s): its exit code and everything it wrote. */
async function runToExit(name: AppName, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const port = String(await freePort());
  const child: ChildProcess = spawn(process.execPath, appCommand(name), {
    cwd: ROOT,
    env: {
      ...process.env,
      ...env,
      GATEWAY_PORT: port,
      RETRIEVAL_HEALTH_PORT: port,
      SYNTHESIS_HEALTH_PORT: port,
      INGESTION_HEALTH_PORT: port,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  clearTimeout(timer);
  return { code, output };
}

describe('fault: Redis with maxmemory-policy allkeys-lru is refused at boot', () => {
  let lru: RedisServer;
  let lruNoConfig: RedisServer;
  let db: TestDatabase;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    [lru, lruNoConfig, db] = await Promise.all([
      startRedis(10_000, ['--maxmemory-policy', 'allkeys-lru']),
      startRedis(10_000, ['--maxmemory-policy', 'allkeys-lru', '--rename-command', 'CONFIG', '']),
      createTestDatabase(),
    ]);
    env = {
      DATABASE_URL: db.url,
      ASK_KEY_PREFIX: `policy-${randomUUID()}`,
      ASK_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'warn',
    };
  });

  afterAll(async () => {
    await lru?.close();
    await lruNoConfig?.close();
    await db?.drop().catch(() => undefined);
  });

  it.each(APPS)('%s exits with 1 and names the setting; it wrote nothing to that Redis', async (name) => {
    const { code, output } = await runToExit(name, { ...env, REDIS_URL: lru.url });
    expect(code).toBe(1);
    expect(output).toContain(REFUSAL);
    expect(await redisCommand(lru.port, 'DBSIZE')).toBe(':0');
  });

  it('reads the policy from INFO memory where CONFIG is disabled (managed Redis), and refuses the same way', async () => {
    expect(await redisCommand(lruNoConfig.port, 'CONFIG GET maxmemory-policy')).toMatch(/^-ERR unknown command/);
    const { code, output } = await runToExit('synthesis-worker', { ...env, REDIS_URL: lruNoConfig.url });
    expect(code).toBe(1);
    expect(output).toContain(REFUSAL);
    expect(await redisCommand(lruNoConfig.port, 'DBSIZE')).toBe(':0');
  });

  it('control: the same four apps with the same environment boot once the policy is noeviction', async () => {
    expect(await redisCommand(lru.port, 'CONFIG SET maxmemory-policy noeviction')).toBe('+OK');
    let stack: Stack | undefined;
    try {
      stack = await startStack({
        env: { ...env, REDIS_URL: lru.url },
        logDir: resolve(ROOT, 'tmp', 'fault-logs', `redis-policy-${process.pid}`),
      });
      const health = await Promise.all(APPS.map((name) => fetch(stack!.apps[name].healthUrl).then((r) => r.status)));
      expect(health).toEqual([200, 200, 200, 200]);
    } finally {
      await stack?.stop(5_000);
    }
  });
});
