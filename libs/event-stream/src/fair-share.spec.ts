import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import Redis from 'ioredis';
import { testRedisUrl } from '@ask/testing';
import { FairShare } from './fair-share';

const url = testRedisUrl();

describe(FairShare.name, () => {
  const redis = new Redis(url);
  const prefix = `fair-${randomUUID()}`;
  const opened: Array<Queue | Worker> = [];

  afterAll(async () => {
    for (const q of opened.reverse()) await q.close();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  /** A queue with fair shares (cap `maxRunning`) and a way to add a job of a project. */
  const setUp = (name: string, maxRunning: number, enabled = true) => {
    const fair = new FairShare(redis, {
      [name]: { enabled, prefix, maxRunning, leaseMs: 60_000, parkMs: 60_000 },
    });
    const queue = new Queue(name, { connection: { url }, prefix });
    opened.push(queue);
    const add = async (projectId: string, n: number) =>
      queue.add(
        'job',
        { projectId, n },
        { priority: (await fair.priority(name, projectId)) ?? 0, jobId: `${projectId}-${n}` },
      );
    return { fair, queue, add };
  };

  describe('priority', () => {
    it.each([
      [true, 1],
      [false, 30],
    ])(
      "with fair shares enabled=%s serves project B's one job at place %i (FIFO: after A's 30), A's in their order",
      async (enabled, place) => {
        const name = `order-${enabled}`;
        const { fair, add } = setUp(name, 0, enabled);
        for (let n = 1; n <= 30; n += 1) await add('A', n);
        await add('B', 1);
        const done: string[] = [];
        const worker: Worker = new Worker(
          name,
          async (job, token): Promise<void> => fair.run(worker, job, token, async () => void done.push(job.id!)),
          { connection: { url, maxRetriesPerRequest: null }, prefix, concurrency: 1 },
        );
        opened.push(worker);
        while (done.length < 31) await new Promise((r) => setTimeout(r, 20));
        expect(done.indexOf('B-1')).toBe(place);
        expect(done.filter((id) => id.startsWith('A-'))).toEqual(Array.from({ length: 30 }, (_, i) => `A-${i + 1}`));
      },
    );

    it('starts the clock again once the queue is idle (values bounded by the backlog, not by uptime)', async () => {
      const { fair } = setUp('idle', 0);
      expect([
        await fair.priority('idle', 'A'),
        await fair.priority('idle', 'A'),
        await fair.priority('idle', 'B'),
      ]).toEqual([1, 1, 1]);
    });
  });

  describe('run (a cap on running jobs per project)', () => {
    it('holds project A to 2 running jobs while B runs, parks the rest and promotes them in order', async () => {
      const { fair, add } = setUp('cap', 2);
      const gates = new Map<string, () => void>();
      let running = 0;
      let maxA = 0;
      const started: string[] = [];
      const worker: Worker = new Worker(
        'cap',
        async (job, token): Promise<void> =>
          fair.run(worker, job, token, async () => {
            started.push(job.id!);
            if (job.data.projectId === 'A') maxA = Math.max(maxA, (running += 1));
            await new Promise<void>((resolve) => gates.set(job.id!, resolve));
            if (job.data.projectId === 'A') running -= 1;
          }),
        { connection: { url, maxRetriesPerRequest: null }, prefix, concurrency: 4 },
      );
      opened.push(worker);
      for (let n = 1; n <= 6; n += 1) await add('A', n);
      await add('B', 1);
      while (started.length < 3) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 300));
      // Four slots, A capped at two: B ran although A's jobs came first and none of A's has ended.
      expect([...started].sort()).toEqual(['A-1', 'A-2', 'B-1']);
      const release = async (id: string) => {
        for (let i = 0; i < 150 && !gates.has(id); i += 1) await new Promise((r) => setTimeout(r, 20));
        if (!gates.has(id)) throw new Error(`${id} never started`);
        gates.get(id)!();
      };
      await release('B-1');
      // One of A's jobs ends at a time, and the job it promotes starts before the next ends: each
      // promotion is A's oldest parked job (two promoted at once may start in either order).
      for (const [ended, promoted] of [
        ['A-1', 'A-3'],
        ['A-2', 'A-4'],
        ['A-3', 'A-5'],
        ['A-4', 'A-6'],
      ]) {
        const before = started.length;
        await release(ended);
        // Bounded: a promotion that never comes fails here instead of spinning past the test's end.
        for (let i = 0; i < 150 && started.length === before; i += 1) await new Promise((r) => setTimeout(r, 20));
        expect([ended, started.slice(before)]).toEqual([ended, [promoted]]);
      }
      for (const id of ['A-5', 'A-6']) await release(id);
      expect([maxA, started.slice(3)]).toEqual([2, ['A-3', 'A-4', 'A-5', 'A-6']]);
    });
  });
});
