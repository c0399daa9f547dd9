import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROCESS_ID_HEADER } from '@ask/ask-contracts';
import { type AppName, freePort, type RunningApp, startStack, stopApp, waitHealthy } from './stack';

/** A child `node -e <script>` with its output in `dir/<name>.log`, as the stack starts an app. */
function spawnApp(dir: string, name: AppName, port: number, script: string): RunningApp {
  const logFile = join(dir, `${name}.log`);
  const fd = openSync(logFile, 'w');
  const child = spawn(process.execPath, ['-e', script], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', fd, fd],
  });
  return { name, child, healthUrl: `http://127.0.0.1:${port}/health`, logFile };
}

/** A health route as the apps serve it: 200 with the answering process's pid. */
const SERVE_HEALTH = `require('node:http').createServer((q, s) => {
  s.writeHead(200, { 'content-type': 'application/json', '${PROCESS_ID_HEADER}': String(process.pid) });
  s.end('{"status":"ok"}');
}).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));`;

/** Another process on the port, answering 200 as a healthy app would (with its own pid, not the child's). */
async function stranger(port: number): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', [PROCESS_ID_HEADER]: String(process.pid) });
    res.end('{"status":"ok"}');
  });
  await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  return server;
}

describe(waitHealthy.name, () => {
  let dir: string;
  const started: RunningApp[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'stack-spec-'));
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((app) => stopApp(app, 2_000)));
    rmSync(dir, { recursive: true, force: true });
  });
  const launch = (...args: Parameters<typeof spawnApp>) => {
    const app = spawnApp(...args);
    started.push(app);
    return app;
  };

  it('resolves when the child itself answers with its own pid', async () => {
    const app = launch(dir, 'api-gateway', await freePort(), SERVE_HEALTH);
    await expect(waitHealthy(app, 30_000)).resolves.toBeUndefined();
  });

  it('fails a child that dies with EADDRINUSE while another process answers on its port, with its log tail', async () => {
    const port = await freePort();
    const other = await stranger(port);
    try {
      const app = launch(dir, 'api-gateway', port, SERVE_HEALTH);
      const error: Error = await waitHealthy(app, 30_000).then(
        () => new Error('resolved'),
        (err: Error) => err,
      );
      const [head, ...tail] = error.message.split('\n');
      expect(head).toBe(
        `api-gateway exited with code 1 before it was healthy; ${app.healthUrl} answered for process ${process.pid}, ` +
          `not pid ${app.child.pid}; last lines of ${app.logFile}:`,
      );
      expect(tail.some((line) => line.includes(`EADDRINUSE: address already in use 127.0.0.1:${port}`))).toBe(true);
    } finally {
      await new Promise((done) => other.close(done));
    }
  });

  it('never passes on another process while its own child runs, and names that process when it gives up', async () => {
    const port = await freePort();
    const other = await stranger(port);
    try {
      // The child lives but never listens (as a gateway still booting, or one that failed to bind and hangs).
      const app = launch(dir, 'retrieval-worker', port, "console.log('booting'); setInterval(() => {}, 1000);");
      await expect(waitHealthy(app, 1_500)).rejects.toThrow(
        `retrieval-worker not healthy after 1500 ms; ${app.healthUrl} answered for process ${process.pid}, ` +
          `not pid ${app.child.pid}; last lines of ${app.logFile}:\nbooting`,
      );
    } finally {
      await new Promise((done) => other.close(done));
    }
  });

  it('fails a child that exits before it listens, with the exit code and its log tail', async () => {
    const app = launch(
      dir,
      'synthesis-worker',
      await freePort(),
      "console.log('one'); console.error('boot failed: no database'); process.exit(3);",
    );
    await expect(waitHealthy(app, 30_000)).rejects.toThrow(
      `synthesis-worker exited with code 3 before it was healthy; last lines of ${app.logFile}:\none\nboot failed: no database`,
    );
  });
});

describe(startStack.name, () => {
  it('fails the start when the apps exit at boot, with the config error from the log', async () => {
    const logDir = mkdtempSync(join(tmpdir(), 'stack-spec-'));
    try {
      const error: Error = await startStack({ logDir, env: { ASK_RATE_LIMIT_PER_MINUTE: 'many' } }).then(
        async (stack) => {
          await stack.stop(2_000);
          return new Error('started');
        },
        (err: Error) => err,
      );
      expect(error.message).toMatch(
        /^(api-gateway|retrieval-worker|synthesis-worker|ingestion-worker) exited with code 1 before it was healthy; last lines of /,
      );
      expect(error.message).toContain('ASK_RATE_LIMIT_PER_MINUTE');
    } finally {
      rmSync(logDir, { recursive: true, force: true });
    }
  }, 120_000);
});
