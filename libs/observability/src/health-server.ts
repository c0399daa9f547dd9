import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PROCESS_ID_HEADER } from '@ask/ask-contracts';
import { registry } from './metrics';

/** A named readiness check; resolves when the dependency answers, rejects otherwise. */
export type HealthCheck = () => Promise<unknown>;

/**
 * A worker's small dedicated HTTP port (workers have no other HTTP server): `GET /health` runs the
 * checks (200 `{status:"ok"}` or 503 naming the failing checks; either way with the process id in the
 * {@link PROCESS_ID_HEADER} header), `GET /metrics` serves Prometheus text.
 * Port 0 picks a free port; the returned `port` is the one bound.
 */
export async function startHealthServer(
  port: number,
  checks: Record<string, HealthCheck>,
): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    if (req.url === '/metrics') {
      res.writeHead(200, { 'content-type': registry.contentType });
      res.end(await registry.metrics());
      return;
    }
    if (req.url === '/health') {
      const failing: string[] = [];
      await Promise.all(
        Object.entries(checks).map(([name, check]) =>
          withTimeout(check(), 2_000).catch(() => {
            failing.push(name);
          }),
        ),
      );
      res.writeHead(failing.length ? 503 : 200, {
        'content-type': 'application/json',
        [PROCESS_ID_HEADER]: String(process.pid),
      });
      res.end(JSON.stringify(failing.length ? { status: 'unavailable', failing: failing.sort() } : { status: 'ok' }));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'not found', code: 'not_found' }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '0.0.0.0', resolve);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), ms);
    promise.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
