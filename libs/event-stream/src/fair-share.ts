import { DelayedError, Job, type MinimalQueue } from 'bullmq';
import type { RedisClient } from './redis-connections';

/** BullMQ's largest job priority (2^21); 1 is served first, equal priorities in insertion order. */
export const MAX_PRIORITY = 2_097_152;

/**
 * A job's priority by start-time fair queuing. KEYS: the queue's virtual time, the projects' next
 * priorities (hash), BullMQ's prioritized, wait, delayed and active keys of the queue. ARGV: project id.
 * A project's job gets max(virtual time, the project's next), and the project's next becomes one
 * more: a project with many jobs waiting has them at V, V+1, V+2, …, one with none gets V, so it is
 * served before the flood's second job. An idle queue (nothing waiting, prioritized, delayed or
 * active) starts the clock again at 1, which bounds the values by the deepest backlog, not by uptime.
 * (With `active` left out, a job added while the project's earlier ones were running but not yet
 * parked restarted at 1, and was parked, and promoted, before them.)
 */
const PRIORITY_LUA = `
if redis.call('ZCARD', KEYS[3]) == 0 and redis.call('LLEN', KEYS[4]) == 0 and redis.call('ZCARD', KEYS[5]) == 0
  and redis.call('LLEN', KEYS[6]) == 0 then
  redis.call('SET', KEYS[1], 1)
  redis.call('DEL', KEYS[2])
end
local v = tonumber(redis.call('GET', KEYS[1]) or '1')
local n = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
local p = math.min(math.max(v, n), tonumber(ARGV[2]))
redis.call('HSET', KEYS[2], ARGV[1], p + 1)
return p
`;

/**
 * Takes a running slot of a project. KEYS: the project's running leases (sorted set, score = expiry
 * in ms), the queue's virtual time. ARGV: job id, lease ms, cap (0: none), the job's priority.
 * Expired leases (a killed worker's) are dropped first; a job already holding a lease keeps it.
 * Replies 1 (taken; the virtual time moves up to the job's priority) or 0 (the project is at its cap).
 */
const ACQUIRE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local cap = tonumber(ARGV[3])
if cap > 0 and not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= cap then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local v = tonumber(redis.call('GET', KEYS[2]) or '1')
if tonumber(ARGV[4]) > v then redis.call('SET', KEYS[2], ARGV[4]) end
return 1
`;

/**
 * Gives a slot back and names the project's first parked job (lowest priority value: its oldest).
 * KEYS: leases, parked (sorted set, score = priority). ARGV: job id.
 */
const RELEASE_LUA = `
redis.call('ZREM', KEYS[1], ARGV[1])
local first = redis.call('ZPOPMIN', KEYS[2])
return first[1] or false
`;

/** The Lua commands {@link FairShare} defines on its connection. */
interface FairCommands {
  fairPriority(
    v: string,
    next: string,
    prio: string,
    wait: string,
    delayed: string,
    active: string,
    project: string,
    max: number,
  ): Promise<number>;
  fairAcquire(
    leases: string,
    v: string,
    jobId: string,
    leaseMs: number,
    cap: number,
    priority: number,
  ): Promise<number>;
  fairRelease(leases: string, parked: string, jobId: string): Promise<string | null>;
}

/** Settings of one queue's fair share. */
export interface FairShareQueue {
  /** Off (ASK_FAIR_SHARES=off): strict FIFO, no cap, no Redis call: {@link FairShare.priority} gives no priority. */
  enabled: boolean;
  /** The queue's BullMQ key prefix (`queuePrefix`): fairness keys sit beside its keys, in its hash slot on a Cluster. */
  prefix: string;
  /** Jobs of one project running at once in this queue, fleet-wide; 0: no cap (ordering only). */
  maxRunning: number;
  /** How long a running slot is held at most (a killed worker's slot frees then), in ms. */
  leaseMs: number;
  /** How long a job parked at its project's cap waits at most before it is tried again, in ms. */
  parkMs: number;
}

/**
 * Fair shares between projects on open-source BullMQ (no groups), in two parts:
 *
 * - Order: each job's BullMQ priority comes from {@link priority} (start-time fair queuing over a
 *   virtual time kept in Redis), so a project's 1,000 waiting jobs do not stand before another
 *   project's one: that one is served next, and a project's own jobs keep their order.
 * - Slots: with `maxRunning` > 0, a project holds at most that many running jobs of the queue across
 *   the fleet (leases in a Redis sorted set, {@link acquire}); a job over the cap is parked (BullMQ
 *   delayed, with its priority) and promoted (first by priority) when one of its project's jobs ends ({@link release}),
 *   or after `parkMs` at the latest. So a project whose provider answers in 100 s cannot hold every
 *   synthesis slot while another project waits.
 *
 * Keys (`{prefix}:fair:{queue}:…`) are in the queue's hash slot, so each script runs on a Cluster.
 */
export class FairShare {
  constructor(
    private readonly redis: RedisClient,
    private readonly queues: Readonly<Record<string, FairShareQueue>>,
  ) {
    const commands = redis as unknown as Partial<FairCommands>;
    if (!commands.fairPriority) redis.defineCommand('fairPriority', { numberOfKeys: 6, lua: PRIORITY_LUA });
    if (!commands.fairAcquire) redis.defineCommand('fairAcquire', { numberOfKeys: 2, lua: ACQUIRE_LUA });
    if (!commands.fairRelease) redis.defineCommand('fairRelease', { numberOfKeys: 2, lua: RELEASE_LUA });
  }

  private get commands(): FairCommands {
    return this.redis as unknown as FairCommands;
  }

  private settings(queue: string): FairShareQueue {
    const settings = this.queues[queue];
    if (!settings) throw new Error(`no fair share settings for queue ${queue}`);
    return settings;
  }

  private key(queue: string, name: string): string {
    return `${this.settings(queue).prefix}:fair:${queue}:${name}`;
  }

  /**
   * The BullMQ priority (1 … {@link MAX_PRIORITY}) of the next job of `projectId` in `queue`: one
   * round trip, before the add. Past MAX_PRIORITY a project's jobs share the last value (FIFO).
   * Undefined when fair shares are off (the job is added without a priority: FIFO).
   */
  async priority(queue: string, projectId: string): Promise<number | undefined> {
    if (!this.settings(queue).enabled) return undefined;
    const bull = `${this.settings(queue).prefix}:${queue}`;
    return this.commands.fairPriority(
      this.key(queue, 'v'),
      this.key(queue, 'next'),
      `${bull}:prioritized`,
      `${bull}:wait`,
      `${bull}:delayed`,
      `${bull}:active`,
      projectId,
      MAX_PRIORITY,
    );
  }

  /** Takes one of the project's running slots for `jobId`; false when the project is at its cap. */
  async acquire(queue: string, projectId: string, jobId: string, priority: number): Promise<boolean> {
    const { leaseMs, maxRunning } = this.settings(queue);
    const reply = await this.commands.fairAcquire(
      this.key(queue, `running:${projectId}`),
      this.key(queue, 'v'),
      jobId,
      leaseMs,
      maxRunning,
      priority,
    );
    return Number(reply) === 1;
  }

  /**
   * Records `jobId` (of BullMQ priority `priority`) as parked at its project's cap, to be promoted by
   * a later {@link release} in priority order (so two slots parking at once keep the project's order).
   */
  async park(queue: string, projectId: string, jobId: string, priority: number): Promise<void> {
    const key = this.key(queue, `parked:${projectId}`);
    await this.redis
      .multi()
      .zadd(key, priority, jobId)
      .pexpire(key, this.settings(queue).parkMs * 4)
      .exec();
  }

  /** Gives `jobId`'s slot back; returns the project's first parked job id (removed from the parked set), if any. */
  release(queue: string, projectId: string, jobId: string): Promise<string | null> {
    return this.commands.fairRelease(
      this.key(queue, `running:${projectId}`),
      this.key(queue, `parked:${projectId}`),
      jobId,
    );
  }

  /**
   * Runs `run` for `job` within its project's share of `queue` (the processor's whole job): takes a
   * slot, or parks the job (BullMQ `moveToDelayed` + `DelayedError`, so the attempt does not count)
   * when the project is at its cap; gives the slot back when `run` settles and promotes the
   * project's first parked job by priority (trying the next when one is no longer delayed).
   * @throws DelayedError when parked (BullMQ's signal to leave the job delayed); what `run` throws.
   */
  async run<T>(
    queue: MinimalQueue,
    job: Job<{ projectId: string }>,
    token: string | undefined,
    run: () => Promise<T>,
  ): Promise<T> {
    const name = queue.name;
    if (!this.settings(name).enabled) return run();
    const jobId = job.id ?? '';
    const { projectId } = job.data;
    const priority = job.opts.priority ?? 0;
    const got = await this.acquire(name, projectId, jobId, priority);
    if (!got) {
      await this.park(name, projectId, jobId, priority);
      await job.moveToDelayed(Date.now() + this.settings(name).parkMs, token);
      throw new DelayedError();
    }
    try {
      return await run();
    } finally {
      await this.promoteNext(queue, projectId, jobId).catch(() => undefined);
    }
  }

  private async promoteNext(queue: MinimalQueue, projectId: string, jobId: string): Promise<void> {
    let next = await this.release(queue.name, projectId, jobId);
    // A parked id may be stale (its delay ran out, or it was parked twice): try a few.
    for (let tries = 0; next && tries < 8; tries += 1) {
      const parked = await Job.fromId(queue, next);
      if (parked && (await parked.isDelayed())) {
        await parked.promote();
        return;
      }
      const [id] = await this.redis.zpopmin(this.key(queue.name, `parked:${projectId}`));
      next = id ?? null;
    }
  }
}
