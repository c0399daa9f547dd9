/**
 * Throwaway Redis and PostgreSQL servers for the fault suites (apps/ask-e2e/src/faults) and the
 * pipeline benches: each on a free loopback port, in its own temporary directory, started as a child
 * process, so a suite can stop, restart or kill them without touching the machine's shared servers
 * (5432, 6379). Everything is removed by `close()`.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './stack';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** PostgreSQL 15's binaries (pgvector is installed for this server). */
export const PG_BIN = '/usr/lib/postgresql/15/bin';

/** Sends one inline Redis command on a fresh connection; resolves the first reply line. */
export function redisCommand(port: number, command: string, timeoutMs = 1_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`redis :${port} did not answer ${command} in ${timeoutMs} ms`));
    }, timeoutMs);
    let reply = '';
    socket.on('connect', () => socket.write(`${command}\r\n`));
    socket.on('data', (chunk) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) {
        clearTimeout(timer);
        socket.destroy();
        resolve(reply.split('\r\n')[0]);
      }
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      if (!reply) reject(new Error(`redis :${port} closed without a reply to ${command}`));
    });
  });
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitExit(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (exited(child)) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** A Redis server of one suite. */
export interface RedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>/0`. */
  readonly url: string;
  /**
   * Stops the server and starts it again on the same port after `downMs`. `keepData: true` shuts down
   * with `SHUTDOWN SAVE` and reloads the dump (as Redis with its default save points does on a
   * restart); `false` kills it (SIGKILL) and comes back empty.
   * @returns how long the server was unreachable, in milliseconds.
   */
  restart(options?: { keepData?: boolean; downMs?: number }): Promise<number>;
  /** Stops the server and removes its directory. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts `redis-server --port <free> --save "" --appendonly no` on 127.0.0.1 as a child process and
 * waits until it answers PING (at most `timeoutMs`). `extraArgs` are added to the command line (e.g.
 * `['--maxmemory-policy', 'allkeys-lru']`).
 */
export async function startRedis(timeoutMs = 10_000, extraArgs: string[] = []): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ask-redis-'));
  let child: ChildProcess;
  let closed = false;

  const launch = async () => {
    child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
        '--dir',
        dir,
        '--loglevel',
        'warning',
        ...extraArgs,
      ],
      { stdio: 'ignore' },
    );
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (exited(child)) throw new Error(`redis-server on :${port} exited with ${child.exitCode ?? child.signalCode}`);
      if ((await redisCommand(port, 'PING').catch(() => '')) === '+PONG') return;
      await sleep(50);
    }
    child.kill('SIGKILL');
    throw new Error(`redis-server on :${port} did not answer PING within ${timeoutMs} ms`);
  };

  const stop = async (keepData: boolean) => {
    if (exited(child)) return;
    if (keepData) await redisCommand(port, 'SHUTDOWN SAVE', 5_000).catch(() => undefined);
    else child.kill('SIGKILL');
    await waitExit(child, 10_000);
  };

  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    async restart({ keepData = true, downMs = 1_000 } = {}) {
      const started = Date.now();
      await stop(keepData);
      await sleep(downMs);
      await launch();
      return Date.now() - started;
    },
    async close() {
      if (closed) return;
      closed = true;
      await stop(false);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A PostgreSQL server of one suite (trust auth, user `postgres`). */
export interface PostgresServer {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/<database>`. */
  urlFor(database: string): string;
  /**
   * Stops the server (`pg_ctl stop -m fast`: open connections are cut) and starts it again on the
   * same port after `downMs`. `mode: 'immediate'` stops it as a crash would (recovery at start).
   * @returns how long the server was unreachable, in milliseconds.
   */
  restart(options?: { downMs?: number; mode?: 'fast' | 'immediate' }): Promise<number>;
  /** Stops the server and removes its directory. Idempotent. */
  close(): Promise<void>;
}

/**
 * Creates a cluster with `initdb --auth=trust` in a temporary directory and starts it with `pg_ctl` on
 * a free port, listening on 127.0.0.1 and a socket in that directory. Running as root, the server runs
 * as the `postgres` system user (PostgreSQL refuses root). Durability is off (fsync) for speed: these
 * servers hold test data only. `maxConnections` (default 200) is the server's `max_connections`: a
 * small one saturates it (new connections refused with 53300).
 */
export async function startPostgres({
  maxConnections = 200,
}: { maxConnections?: number } = {}): Promise<PostgresServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ask-pg-'));
  const data = join(dir, 'data');
  const asUser = runAs();
  if (asUser) chownSync(dir, asUser.uid, asUser.gid);
  const pg = (bin: string, args: string[], timeout = 60_000) =>
    run(join(PG_BIN, bin), args, { timeout, ...(asUser ?? {}), env: { ...process.env, LC_ALL: 'C' } });
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c synchronous_commit=off -c max_connections=${maxConnections}`;
  const start = () =>
    pg('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '30', 'start']);
  const stop = (mode: 'fast' | 'immediate') => pg('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '30', 'stop']);
  let closed = false;

  try {
    await pg('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
    await start();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    port,
    urlFor: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async restart({ downMs = 1_000, mode = 'fast' } = {}) {
      const started = Date.now();
      await stop(mode);
      await sleep(downMs);
      await start();
      return Date.now() - started;
    },
    async close() {
      if (closed) return;
      closed = true;
      if (existsSync(join(data, 'postmaster.pid'))) await stop('immediate').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Pids (among `pids`) holding a TCP connection to 127.0.0.1:`port` (from /proc: no tool needed). */
export function pidsConnectedTo(port: number, pids: number[]): number[] {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length > 9 && Number.parseInt(cols[2].split(':')[1], 16) === port) inodes.add(cols[9]);
    }
  }
  return pids.filter((pid) =>
    readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return inodes.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? '');
      } catch {
        return false;
      }
    }),
  );
}

/** The uid/gid of the `postgres` system user when this process is root (initdb refuses root). */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line)
    throw new Error(
      `running as ${userInfo().username}: PostgreSQL needs a non-root user, and there is no postgres user`,
    );
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
}

/** A local Redis Cluster of one suite: `masters` masters, no replicas, each in its own directory. */
export interface RedisClusterServer {
  /** The masters' ports, in the order they were created (master i serves the i-th third of the slots, for 3). */
  readonly ports: number[];
  /** `127.0.0.1:<port>,…`: the value of REDIS_CLUSTER_NODES. */
  readonly nodes: string;
  /**
   * Stops master `index` (`SHUTDOWN SAVE`: its data and its nodes.conf are kept) and starts it again
   * on the same port after `downMs`; resolves once the cluster answers `cluster_state:ok` again.
   * @returns how long the master was unreachable, in milliseconds.
   */
  restart(index: number, options?: { downMs?: number }): Promise<number>;
  /** Stops every master and removes their directories. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts `masters` (default 3) `redis-server --cluster-enabled yes` on free loopback ports, each with
 * its own `--cluster-config-file` in a temporary directory, joins them with
 * `redis-cli --cluster create … --cluster-replicas 0 --cluster-yes`, and waits for
 * `cluster_state:ok` on every node (at most `timeoutMs`).
 * @throws Error when a server does not start or the cluster does not come up in time.
 */
export async function startRedisCluster(masters = 3, timeoutMs = 30_000): Promise<RedisClusterServer> {
  const ports: number[] = [];
  for (let i = 0; i < masters; i += 1) ports.push(await freePort());
  const dirs = ports.map(() => mkdtempSync(join(tmpdir(), 'ask-redis-cluster-')));
  const children: ChildProcess[] = [];
  let closed = false;

  const launch = async (index: number) => {
    const port = ports[index];
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(dirs[index], 'nodes.conf'),
        '--cluster-node-timeout',
        '5000',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
        '--dir',
        dirs[index],
        '--loglevel',
        'warning',
      ],
      { stdio: 'ignore' },
    );
    children[index] = child;
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (exited(child)) throw new Error(`redis-server on :${port} exited with ${child.exitCode ?? child.signalCode}`);
      if ((await redisCommand(port, 'PING').catch(() => '')) === '+PONG') return;
      await sleep(50);
    }
    throw new Error(`redis-server on :${port} did not answer PING`);
  };

  const clusterOk = async () => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const states = await Promise.all(
        ports.map((port) =>
          run('redis-cli', ['-p', String(port), 'CLUSTER', 'INFO'], { timeout: 2_000 }).then(
            ({ stdout }) => /cluster_state:ok/.test(stdout),
            () => false,
          ),
        ),
      );
      if (states.every(Boolean)) return;
      await sleep(200);
    }
    throw new Error(`the cluster on :${ports.join(', :')} did not reach cluster_state:ok in ${timeoutMs} ms`);
  };

  const stopAll = async () => {
    await Promise.all(
      children.map(async (child) => {
        if (!child || exited(child)) return;
        child.kill('SIGKILL');
        await waitExit(child, 5_000);
      }),
    );
  };

  try {
    for (let i = 0; i < masters; i += 1) await launch(i);
    await run(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'],
      { timeout: timeoutMs },
    );
    await clusterOk();
  } catch (err) {
    await stopAll();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  return {
    ports,
    nodes: ports.map((p) => `127.0.0.1:${p}`).join(','),
    async restart(index, { downMs = 1_000 } = {}) {
      const started = Date.now();
      await redisCommand(ports[index], 'SHUTDOWN SAVE', 5_000).catch(() => undefined);
      await waitExit(children[index], 10_000);
      await sleep(downMs);
      await launch(index);
      await clusterOk();
      return Date.now() - started;
    },
    async close() {
      if (closed) return;
      closed = true;
      await stopAll();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
}
