import { randomUUID } from 'node:crypto';
import { Worker } from 'bullmq';
import { connectTestRedis, testRedisUrl } from '@ask/testing';
import { startHealthServer } from './health-server';
import { QueueLoopFailingError, QueueLoopHealth } from './queue-loop-health';

describe(QueueLoopHealth.name, () => {
  describe('record', () => {
    it('logs one line per distinct error per interval, digits folded, with the count since the last line', () => {
      let now = 0;
      const lines: string[] = [];
      const health = new QueueLoopHealth({ intervalMs: 1_000, log: (l) => lines.push(l), now: () => now });
      for (let i = 0; i < 500; i += 1) health.record('q', new Error(`MOVED ${i} 127.0.0.1:7001`));
      health.record('q', new Error('CROSSSLOT Keys in request don\u2019t hash to the same slot'));
      now = 1_000;
      health.record('q', new Error('MOVED 3 127.0.0.1:7001'));
      expect(lines).toEqual([
        'queue q: worker loop error: MOVED 0 127.0.0.1:7001',
        'queue q: worker loop error: CROSSSLOT Keys in request don\u2019t hash to the same slot',
        'queue q: worker loop error: MOVED 3 127.0.0.1:7001 (499 more since the last line)',
      ]);
    });
  });

  describe('check', () => {
    it('rejects while the latest error is younger than the interval, then resolves', async () => {
      let now = 0;
      const health = new QueueLoopHealth({ intervalMs: 1_000, log: () => undefined, now: () => now });
      await expect(health.check()).resolves.toBeUndefined();
      health.record('ask-retrieval', new Error('boom'));
      now = 999;
      await expect(health.check()).rejects.toEqual(
        new QueueLoopFailingError([{ queue: 'ask-retrieval', error: 'boom' }]),
      );
      now = 1_000;
      await expect(health.check()).resolves.toBeUndefined();
    });
  });

  describe('watch (a real BullMQ worker whose loop fails)', () => {
    const redis = connectTestRedis();
    const prefix = `loop-health-${randomUUID()}`;
    afterAll(async () => {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    });

    it('reports the queue failing on /health (503) and logs one line for thousands of attempts', async () => {
      // The queue's marker and wait keys hold strings: BullMQ's fetch script fails with WRONGTYPE at
      // every attempt, in a tight loop (4,563 errors in 3 s measured here), as CROSSSLOT did on a Cluster.
      await redis.set(`${prefix}:q:marker`, 'x');
      await redis.set(`${prefix}:q:wait`, 'x');
      const lines: string[] = [];
      const health = new QueueLoopHealth({ intervalMs: 60_000, log: (l) => lines.push(l) });
      let errors = 0;
      const worker = new Worker('q', async () => undefined, {
        connection: { url: testRedisUrl(), maxRetriesPerRequest: null },
        prefix,
      });
      worker.on('error', () => (errors += 1));
      health.watch('q', worker);
      const server = await startHealthServer({ port: 0 }, { queues: () => health.check() });
      try {
        while (errors < 100) await new Promise((r) => setTimeout(r, 20));
        const reply = await fetch(`http://127.0.0.1:${server.port}/health`);
        expect([reply.status, await reply.json()]).toEqual([503, { status: 'unavailable', failing: ['queues'] }]);
        expect(lines).toEqual([expect.stringMatching(/^queue q: worker loop error: WRONGTYPE /)]);
      } finally {
        await server.close();
        await worker.close(true);
      }
    });
  });
});
