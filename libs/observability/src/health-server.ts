import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PROCESS_ID_HEADER } from '@ask/ask-contracts';
import { registry } from './metrics';
import { metricsAuthorized } from './metrics-token';

/** A named readiness check; resolves when the dependency answers, rejects otherwise. */
export type HealthCheck = () => Promise<unknown>;

/** Where a worker's health port listens and who may read its metrics. */
export interface HealthServerOptions {
  /** TCP port; 0 picks a free port. */
  port: number;
  /** Address to bind (WORKER_HEALTH_HOST); loopback, `127.0.0.1`, when absent. */
  host?: string;
  /** Bearer token `/metrics` requires (ASK_METRICS_TOKEN); open when absent. */
  metricsToken?: string;
}

/**
 * A worker's small dedicated HTTP port (workers have no other HTTP server): `GET /health` runs the
 * checks (200 `{status:"ok"}` or 503 naming the failing checks; either way with the process id in the
 * {@link PROCESS_ID_HEADER} header), `GET /metrics` serves Prometheus text, or a typed 401 without
 * `Authorization: Bearer <metricsToken>` when a token is set. Binds `host` (loopback by default);
 * the returned `port` is the one bound.
 */
export async function startHealthServer(
  options: HealthServerOptions,
  checks: Record<string, HealthCheck>,
): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    if (req.url === '/metrics') {
      if (!metricsAuthorized(req.headers.authorization, options.metricsToken)) {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
        res.end(JSON.stringify({ error: 'authentication is required', code: 'unauthorized' }));
        return;
      }
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
    server.listen(options.port, options.host ?? '127.0.0.1', resolve);
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
