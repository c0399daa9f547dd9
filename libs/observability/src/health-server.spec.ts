import { PROCESS_ID_HEADER } from '@ask/ask-contracts';
import { startHealthServer } from './health-server';
import { asksTotal } from './metrics';

describe(startHealthServer.name, () => {
  it('answers 200 when every check passes and serves metrics', async () => {
    const server = await startHealthServer(0, { redis: async () => 'PONG' });
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
    const server = await startHealthServer(0, {
      redis: async () => 'PONG',
      postgres: async () => {
        throw new Error('down');
      },
    });
    try {
      const health = await fetch(`http://127.0.0.1:${server.port}/health`);
      expect([health.status, health.headers.get(PROCESS_ID_HEADER)]).toEqual([503, String(process.pid)]);
      expect(await health.json()).toEqual({ status: 'unavailable', failing: ['postgres'] });
    } finally {
      await server.close();
    }
  });
});
