import { networkInterfaces } from 'node:os';
import { connect } from 'node:net';
import { PROCESS_ID_HEADER } from '@ask/ask-contracts';
import { startHealthServer } from './health-server';
import { asksTotal } from './metrics';

/** The machine's IPv4 addresses other than loopback (192.0.2.2 on the reference machine). */
const otherAddresses = (): string[] =>
  Object.values(networkInterfaces())
    .flatMap((list) => list ?? [])
    .filter((a) => a.family === 'IPv4' && !a.internal)
    .map((a) => a.address);

/** `connected`, or the socket error code (`ECONNREFUSED`) of a TCP connect to host:port. */
const reach = (host: string, port: number) =>
  new Promise<string>((done) => {
    const socket = connect({ host, port, timeout: 3_000 });
    socket.once('connect', () => (socket.destroy(), done('connected')));
    socket.once('timeout', () => (socket.destroy(), done('timeout')));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });

describe(startHealthServer.name, () => {
  it('answers 200 when every check passes and serves metrics', async () => {
    const server = await startHealthServer({ port: 0 }, { redis: async () => 'PONG' });
    try {
      asksTotal.inc({ outcome: 'done' });
      const health = await fetch(`http://127.0.0.1:${server.port}/health`);
      expect([health.status, health.headers.get(PROCESS_ID_HEADER)]).toEqual([200, String(process.pid)]);
      expect(await health.json()).toEqual({ status: 'ok' });
      const metrics = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
      expect(metrics).toContain('ask_finished_total{outcome="done"} 1');
    } finally {
      await server.close();
    }
  });

  it('answers 503 naming the failing checks', async () => {
    const server = await startHealthServer(
      { port: 0 },
      {
        redis: async () => 'PONG',
        postgres: async () => {
          throw new Error('down');
        },
      },
    );
    try {
      const health = await fetch(`http://127.0.0.1:${server.port}/health`);
      expect([health.status, health.headers.get(PROCESS_ID_HEADER)]).toEqual([503, String(process.pid)]);
      expect(await health.json()).toEqual({ status: 'unavailable', failing: ['postgres'] });
    } finally {
      await server.close();
    }
  });

  describe('where it listens', () => {
    it("binds loopback when no host is given: the machine's other IPv4 addresses refuse the port", async () => {
      const server = await startHealthServer({ port: 0 }, {});
      try {
        const others = otherAddresses();
        expect(await reach('127.0.0.1', server.port)).toBe('connected');
        expect(await Promise.all(others.map((a) => reach(a, server.port)))).toEqual(others.map(() => 'ECONNREFUSED'));
      } finally {
        await server.close();
      }
    });

    it('binds the host it is given (0.0.0.0: every address answers)', async () => {
      const server = await startHealthServer({ port: 0, host: '0.0.0.0' }, {});
      try {
        const others = otherAddresses();
        expect(await Promise.all(['127.0.0.1', ...others].map((a) => reach(a, server.port)))).toEqual(
          ['127.0.0.1', ...others].map(() => 'connected'),
        );
      } finally {
        await server.close();
      }
    });
  });

  describe('with a metrics token', () => {
    const token = 'metrics-token-0123456789abcdef';

    it('answers /metrics 401 without the bearer token or with another one, 200 with it; /health stays open', async () => {
      const server = await startHealthServer({ port: 0, metricsToken: token }, { redis: async () => 'PONG' });
      try {
        const url = `http://127.0.0.1:${server.port}`;
        const scrape = async (authorization?: string) => {
          const response = await fetch(`${url}/metrics`, { headers: authorization ? { authorization } : {} });
          const body = await response.text();
          return `${response.status} ${response.status === 200 ? body.includes('ask_finished_total') : body}`;
        };
        expect(await scrape()).toBe('401 {"error":"authentication is required","code":"unauthorized"}');
        expect(await scrape(`Bearer ${token}x`)).toBe(
          '401 {"error":"authentication is required","code":"unauthorized"}',
        );
        expect(await scrape(token)).toBe('401 {"error":"authentication is required","code":"unauthorized"}');
        expect(await scrape(`Bearer ${token}`)).toBe('200 true');
        expect((await fetch(`${url}/health`)).status).toBe(200);
      } finally {
        await server.close();
      }
    });
  });
});
