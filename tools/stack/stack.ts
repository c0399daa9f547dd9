import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { PROCESS_ID_HEADER } from '@ask/ask-contracts';

/** The four apps, each started as its own process. */
export const APPS = ['api-gateway', 'retrieval-worker', 'synthesis-worker', 'ingestion-worker'] as const;
export type AppName = (typeof APPS)[number];

/** A running app process. */
export interface RunningApp {
  name: AppName;
  child: ChildProcess;
  healthUrl: string;
  logFile: string;
}

/** The running stack: the gateway's base URL and each app's process. */
export interface Stack {
  gatewayUrl: string;
  env: NodeJS.ProcessEnv;
  apps: Record<AppName, RunningApp>;
  /**
   * Starts another process of one app (a second worker, or a replacement after a kill). A second
   * gateway listens on a port of its own: its base URL is `http://127.0.0.1:<port>` of its `healthUrl`.
   */
  start(name: AppName, extraEnv?: NodeJS.ProcessEnv): Promise<RunningApp>;
  /** SIGTERM every process and wait for it to exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

const ROOT = resolve(__dirname, '..', '..');

/** Ports {@link freePort} has handed out in this process: never handed out twice. */
const handedOut = new Set<number>();

/**
 * A free TCP port on loopback, in the ephemeral range the OS hands out, and never one this process
 * was given before: the port is released before the app binds it, so the OS may offer it again to
 * the next call (a worker's health port once took its gateway's port, and the stack's health check
 * then passed against the wrong process).
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await probePort();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

function probePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolvePort(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Where the apps' code comes from: the TypeScript sources, or the JavaScript that `nx build` wrote. */
export type StackCode = 'source' | 'build';

/**
 * The command line of one app: `tools/run-ts.js apps/<app>/src/main.ts` (SWC as each file is
 * required) for `source`; plain `node dist/<app>/main.js` for `build` (what the production image runs).
 * @throws Error naming the build command when `build` is asked for and dist/<app>/main.js is missing.
 */
export function appCommand(name: AppName, code: StackCode = 'source'): string[] {
  if (code === 'source') return [join(ROOT, 'tools', 'run-ts.js'), `apps/${name}/src/main.ts`];
  const main = join(ROOT, 'dist', name, 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: build it first (npx nx run ${name}:build)`);
  return [main];
}

/**
 * Starts the gateway and the three workers (retrieval, synthesis, ingestion) as separate Node processes (from the sources through
 * tools/run-ts.js, or with `code: 'build'` from the built dist/<app>/main.js), on free ports, with
 * `env` added to the environment, and waits until each answers its health check.
 * Logs go to `logDir/<app>-<n>.log`. `nodeArgs` go to each app's `node` before its script (e.g.
 * `--require` of a profiler preload). An app is healthy when its `/health` answers 200 with the
 * child's own pid in {@link PROCESS_ID_HEADER}; another process answering on the same port never counts.
 * @throws Error naming the app, with the last lines of its log, when one exits before it is healthy or
 *   is not healthy within `timeoutMs` (naming the other process when one answered on its port).
 */
export async function startStack(
  options: { env?: NodeJS.ProcessEnv; logDir?: string; timeoutMs?: number; code?: StackCode; nodeArgs?: string[] } = {},
): Promise<Stack> {
  const logDir = options.logDir ?? join(ROOT, 'tmp', 'stack-logs');
  mkdirSync(logDir, { recursive: true });
  const gatewayPort = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env, GATEWAY_PORT: String(gatewayPort) };
  // Every gateway of this stack shares one events-token secret (a development stand-in: production
  // sets ASK_EVENTS_SECRET, or derives it from ASK_ENCRYPTION_KEY / ASK_ADMIN_KEY).
  if (!env.ASK_EVENTS_SECRET && !env.ASK_ENCRYPTION_KEY && !env.ASK_ADMIN_KEY)
    env.ASK_EVENTS_SECRET = randomBytes(32).toString('base64url');
  const children: RunningApp[] = [];
  let counter = 0;

  const start = async (name: AppName, extraEnv: NodeJS.ProcessEnv = {}): Promise<RunningApp> => {
    // The first gateway listens on the stack's port; another one (a fleet of gateways) on its own.
    const firstGateway = name === 'api-gateway' && !children.some((app) => app.name === 'api-gateway');
    const healthPort = firstGateway ? gatewayPort : await freePort();
    const appEnv: NodeJS.ProcessEnv = {
      ...env,
      ...extraEnv,
      ...(name === 'api-gateway' ? { GATEWAY_PORT: String(healthPort) } : {}),
      RETRIEVAL_HEALTH_PORT: String(healthPort),
      SYNTHESIS_HEALTH_PORT: String(healthPort),
      INGESTION_HEALTH_PORT: String(healthPort),
    };
    const logFile = join(logDir, `${name}-${(counter += 1)}.log`);
    const log = createWriteStream(logFile);
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...appCommand(name, options.code)], {
      cwd: ROOT,
      env: appEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Two sources into one file: neither may end it, the child's 'close' (both pipes drained) does.
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    const logClosed = new Promise<void>((done) => {
      log.once('close', done);
      child.once('close', () => log.end());
    });
    const app: RunningApp = { name, child, healthUrl: `http://127.0.0.1:${healthPort}/health`, logFile };
    children.push(app);
    await waitHealthy(app, options.timeoutMs ?? 60_000, logClosed);
    return app;
  };

  const stop = async (graceMs = 10_000): Promise<void> => {
    await Promise.all(children.map((app) => stopApp(app, graceMs)));
  };

  try {
    const [gateway, retrieval, synthesis, ingestion] = await Promise.all(APPS.map((name) => start(name)));
    return {
      gatewayUrl: `http://127.0.0.1:${gatewayPort}`,
      env,
      apps: {
        'api-gateway': gateway,
        'retrieval-worker': retrieval,
        'synthesis-worker': synthesis,
        'ingestion-worker': ingestion,
      },
      start,
      stop,
    };
  } catch (err) {
    await stop(2_000);
    throw err;
  }
}

/** SIGTERM one app and wait for it to exit; SIGKILL after `graceMs`. */
export function stopApp(app: RunningApp, graceMs = 10_000): Promise<void> {
  if (app.child.exitCode !== null || app.child.signalCode !== null) return Promise.resolve();
  return new Promise((resolveStop) => {
    const timer = setTimeout(() => app.child.kill('SIGKILL'), graceMs);
    app.child.once('exit', () => {
      clearTimeout(timer);
      resolveStop();
    });
    app.child.kill('SIGTERM');
  });
}

/**
 * Waits until `app`'s own process answers its health check: 200 with the child's pid in
 * {@link PROCESS_ID_HEADER}. An answer from any other process (no header, or another pid) does not
 * count. `logClosed` resolves when the child's log file is complete (its pipes drained), so an early
 * exit's error holds the log's last lines; without it the file is read as it stands.
 * @throws Error naming the app, its exit code or signal and its log's last lines, when the child exits
 *   first; or, after `timeoutMs`, naming the other process when one answered on the port.
 */
export async function waitHealthy(app: RunningApp, timeoutMs: number, logClosed?: Promise<void>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const exited = new Promise<void>((done) => {
    if (hasExited(app.child)) done();
    else app.child.once('exit', () => done());
  });
  let exitedNow = false;
  void exited.then(() => (exitedNow = true));
  let stranger: string | undefined;
  while (Date.now() < deadline && !exitedNow) {
    try {
      const response = await fetch(app.healthUrl, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      const pid = response.headers.get(PROCESS_ID_HEADER);
      if (pid === String(app.child.pid)) {
        if (response.ok) return;
      } else {
        stranger = pid ? `process ${pid}` : `a process that sends no ${PROCESS_ID_HEADER}`;
      }
    } catch {
      // not listening yet
    }
    await within(exited, 200);
  }
  const answered = stranger ? `; ${app.healthUrl} answered for ${stranger}, not pid ${app.child.pid}` : '';
  if (hasExited(app.child)) {
    if (logClosed) await within(logClosed, 2_000);
    const how = app.child.exitCode !== null ? `code ${app.child.exitCode}` : `signal ${app.child.signalCode}`;
    throw new Error(`${app.name} exited with ${how} before it was healthy${answered}; ${logTail(app.logFile)}`);
  }
  throw new Error(`${app.name} not healthy after ${timeoutMs} ms${answered}; ${logTail(app.logFile)}`);
}

/** Waits for `promise`, or `ms` milliseconds when it takes longer (its timer cleared either way). */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** The last `lines` lines of a log file (each cut to 500 characters), introduced by its path. */
export function logTail(file: string, lines = 20): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return `no log at ${file}`;
  }
  const tail = text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(-lines)
    .map((line) => (line.length > 500 ? `${line.slice(0, 500)}…` : line));
  return tail.length ? `last lines of ${file}:\n${tail.join('\n')}` : `${file} is empty`;
}
// The throwaway servers live beside the stack so specs and benches reach them as @ask/stack, not through
// an app's folder.
export * from './servers';
