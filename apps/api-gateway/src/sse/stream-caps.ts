import { randomUUID } from 'node:crypto';
import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import { AskError, AskErrorCode, serviceUnavailable } from '@ask/ask-errors';
import type { RedisClient } from '@ask/event-stream';

/** Seconds a client refused by a stream cap is told to wait (`Retry-After`). */
const RETRY_AFTER_S = 5;

/** The `limit=` names a refusal gives, per stream and per project. */
export interface StreamCapNames {
  perStream: string;
  perProject: string;
}

/** The ask streams' names (`streams_per_ask`, `streams_per_project`). */
export const ASK_STREAM_CAPS: StreamCapNames = { perStream: 'streams_per_ask', perProject: 'streams_per_project' };

/** The ingestion streams' names (`streams_per_ingestion`, `ingestion_streams_per_project`). */
export const INGESTION_STREAM_CAPS: StreamCapNames = {
  perStream: 'streams_per_ingestion',
  perProject: 'ingestion_streams_per_project',
};

/** The `limit=` name of the per-process total (every ask and ingestion stream of one gateway process). */
export const PROCESS_STREAM_CAP = 'streams_per_process';

/** The caps of one kind of stream. */
export interface StreamCapLimits {
  /** Open streams of one ask (or one ingestion) across the fleet: ASK_STREAMS_PER_ASK. */
  perAsk: number;
  /** Open streams of one project across the fleet, this kind only: ASK_STREAMS_PER_PROJECT. */
  perProject: number;
}

/**
 * Takes a fleet-wide slot. KEYS: the slots (sorted set, member = one stream, score = its lease's expiry
 * in ms, Redis time). ARGV: member, lease ms, cap. Expired leases (a killed gateway's) go first.
 * Replies 1 (taken) or 0 (the cap is reached). One key per call, so it runs on a Cluster.
 */
const ACQUIRE_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/**
 * Renews this process's leases in one set. KEYS: the slots. ARGV: lease ms, then the members. Each
 * member still in the set gets now + lease ms (Redis time, as {@link ACQUIRE_LUA}: one clock for every
 * gateway); a member already removed stays removed (`XX`).
 */
const RENEW_LUA = `
local t = redis.call('TIME')
local expiry = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], 'XX', expiry, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`;

interface SlotCommands {
  streamSlotAcquire(key: string, member: string, leaseMs: number, cap: number): Promise<number>;
  streamSlotRenew(key: string, leaseMs: number, ...members: string[]): Promise<number>;
}

/**
 * Every open event stream of one gateway process, of every kind (ask and ingestion): the per-process
 * total (ASK_STREAMS_PER_PROCESS), counted in memory, and the fleet-wide leases this process holds,
 * taken and renewed by the one-key scripts above every third of a lease.
 */
export class ProcessStreams implements OnApplicationShutdown {
  private open = 0;
  /** Lease keys → members this process holds (a member per stream). */
  private readonly held = new Map<string, Set<string>>();
  private timer: NodeJS.Timeout | undefined;
  readonly logger = new Logger('StreamCaps');

  /**
   * @param redis the gateway's events connection (one server or a Cluster; every script here names one key).
   * @param max ASK_STREAMS_PER_PROCESS.
   * @param leaseMs how long a stream's fleet-wide slot lives without renewal (a killed gateway's slots
   *   free after it); renewed every `leaseMs / 3` while the stream is open. 30,000 in production.
   */
  constructor(
    readonly redis: RedisClient,
    readonly max: number,
    readonly leaseMs = 30_000,
  ) {
    const commands = redis as unknown as Partial<SlotCommands> & RedisClient;
    if (!commands.streamSlotAcquire) redis.defineCommand('streamSlotAcquire', { numberOfKeys: 1, lua: ACQUIRE_LUA });
    if (!commands.streamSlotRenew) redis.defineCommand('streamSlotRenew', { numberOfKeys: 1, lua: RENEW_LUA });
  }

  /** Takes a slot of the set `key` for `member` unless `cap` are held there (expired leases first): true when taken. */
  async acquire(key: string, member: string, cap: number): Promise<boolean> {
    const taken = await (this.redis as unknown as SlotCommands).streamSlotAcquire(key, member, this.leaseMs, cap);
    return Number(taken) === 1;
  }

  /** Takes one of this process's stream slots; false when `max` are open. */
  take(): boolean {
    if (this.open >= this.max) return false;
    this.open += 1;
    return true;
  }

  /** Gives a slot taken with {@link take} back. */
  give(): void {
    this.open = Math.max(0, this.open - 1);
  }

  /** Open streams of this process. */
  get count(): number {
    return this.open;
  }

  /** Records a fleet-wide lease (`key`, `member`) as held, so the renewal loop keeps it alive. */
  hold(key: string, member: string): void {
    const members = this.held.get(key) ?? new Set<string>();
    members.add(member);
    this.held.set(key, members);
    if (!this.timer) {
      this.timer = setInterval(() => void this.renew(), Math.max(50, Math.floor(this.leaseMs / 3)));
      this.timer.unref();
    }
  }

  /** Forgets a lease (after its ZREM). */
  drop(key: string, member: string): void {
    const members = this.held.get(key);
    if (!members) return;
    members.delete(member);
    if (members.size === 0) this.held.delete(key);
    if (this.held.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  onApplicationShutdown(): void {
    this.close();
  }

  /** Stops renewing (shutdown): the leases this process held expire within `leaseMs`. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.held.clear();
  }

  /**
   * Pushes every held lease's expiry to Redis time + leaseMs: one script call per set, sent together
   * (not one pipeline: on a Cluster a pipeline's keys must share a slot, and these sets do not); a
   * failure waits for the next round.
   */
  private async renew(): Promise<void> {
    const commands = this.redis as unknown as SlotCommands;
    const calls = [...this.held].map(([key, members]) => commands.streamSlotRenew(key, this.leaseMs, ...members));
    const failed = (await Promise.allSettled(calls)).find((r) => r.status === 'rejected');
    if (failed) this.logger.warn(`stream lease renewal failed: ${(failed.reason as Error).message}`);
  }
}

/**
 * Caps on concurrent event streams of one kind (ask, or ingestion), counted **across the fleet**:
 * per streamed thing (an ask, or an ingestion; ASK_STREAMS_PER_ASK) and per project
 * (ASK_STREAMS_PER_PROJECT), as leases in Redis sorted sets under the key prefix
 * (`<prefix>:streams:<kind>:ask:<id>`, `<prefix>:streams:<kind>:project:<id>`) that every gateway
 * replica shares; plus the per-process total of {@link ProcessStreams}. A gateway that dies holding
 * slots frees them when their leases run out (`leaseMs`, 30 s), since only a live process renews them.
 */
export class StreamCaps {
  constructor(
    private readonly process: ProcessStreams,
    private readonly keyPrefix: string,
    private readonly kind: 'ask' | 'ingestion',
    private readonly limits: StreamCapLimits,
    private readonly names: StreamCapNames = ASK_STREAM_CAPS,
  ) {}

  private key(scope: 'ask' | 'project', id: string): string {
    return `${this.keyPrefix}:streams:${this.kind}:${scope}:${id}`;
  }

  /**
   * Takes one stream slot of this process, of the ask (or ingestion) and of its project, fleet-wide;
   * returns the function that gives them back (idempotent; its Redis removal is not awaited).
   * @throws AskError 429 `rate_limited`, `details` `limit=<name> max=N retry_after=5` (the per-process
   *   `streams_per_process`, then the names given at construction, by default `streams_per_ask` /
   *   `streams_per_project`), when a cap is reached.
   * @throws AskError 503 `service_unavailable` (Retry-After 5) when Redis cannot be reached: the
   *   stream itself is read from Redis, so it could not be served either.
   */
  async acquire(streamId: string, projectId: string): Promise<() => void> {
    if (!this.process.take()) throw capReached(PROCESS_STREAM_CAP, this.process.max);
    const member = randomUUID();
    const taken: string[] = [];
    const giveBack = () => {
      this.process.give();
      for (const key of taken) {
        this.process.drop(key, member);
        this.process.redis.zrem(key, member).catch(() => undefined); // its lease runs out anyway
      }
    };
    try {
      for (const [key, cap, name] of [
        [this.key('ask', streamId), this.limits.perAsk, this.names.perStream],
        [this.key('project', projectId), this.limits.perProject, this.names.perProject],
      ] as const) {
        if (!(await this.process.acquire(key, member, cap))) throw capReached(name, cap);
        taken.push(key);
        this.process.hold(key, member);
      }
    } catch (err) {
      giveBack();
      if (err instanceof AskError) throw err;
      this.process.logger.warn(`stream slots unavailable: ${(err as Error).message}`);
      throw serviceUnavailable('event streams unavailable (Redis)', RETRY_AFTER_S);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      giveBack();
    };
  }
}

function capReached(limit: string, max: number): AskError {
  return new AskError(AskErrorCode.RateLimited, { details: `limit=${limit} max=${max} retry_after=${RETRY_AFTER_S}` });
}
