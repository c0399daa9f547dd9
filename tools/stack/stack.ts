import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

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
  /** Starts another process of one app (a second worker, or a replacement after a kill). */
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
 * `--require` of a profiler preload).
 * @throws Error naming the app when one exits or is not healthy within `timeoutMs`.
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
    const healthPort = name === 'api-gateway' ? gatewayPort : await freePort();
    const appEnv: NodeJS.ProcessEnv = {
      ...env,
      ...extraEnv,
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
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    const app: RunningApp = { name, child, healthUrl: `http://127.0.0.1:${healthPort}/health`, logFile };
    children.push(app);
    await waitHealthy(app, options.timeoutMs ?? 60_000);
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

async function waitHealthy(app: RunningApp, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (app.child.exitCode !== null)
      throw new Error(`${app.name} exited with ${app.child.exitCode}; see ${app.logFile}`);
    try {
      const response = await fetch(app.healthUrl);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${app.name} not healthy after ${timeoutMs} ms; see ${app.logFile}`);
}
