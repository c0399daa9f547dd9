import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redis-connections';
import { askStreamKey, type AskEvent, type AskEventMap, type AskEventType, TERMINAL_EVENTS } from '@ask/ask-contracts';
import { redactSecrets } from '@ask/ask-errors';
import { inSpan, SpanKind } from '@ask/observability';
import { streamHashTag } from './stream-hub';

/** Who an ask belongs to; stored beside its stream so the events route can check the caller's project. */
export interface AskMeta {
  projectId: string;
  sessionId: string;
  acceptedAt: string;
  /** The API key that accepted the ask (absent for the admin key): its revocation ends the ask's streams. */
  keyId?: string;
}

/**
 * One run's claim on an ask (a fencing token). A worker claims the ask when its run starts; a later
 * claim (a retried or re-run job, on any worker) supersedes it, and from then on every publish that
 * carries the older claim is refused, atomically with the XADD.
 */
export interface RunClaim {
  askId: string;
  /** Random per run: unique across Redis restarts, unlike a counter. */
  token: string;
  /** 1 for the ask's first claimed run, 2 for the next, … (from the meta hash's `runs` counter). */
  run: number;
}

/** Why a publish was refused. */
export type FenceReason = 'ended' | 'superseded';

/**
 * A publish was refused: the ask's stream already holds its terminal event (`ended`), or the
 * publishing run's claim is no longer the current one (`superseded`: another run took the ask, or the
 * ask's meta is gone). The run that gets this must stop: publish nothing more, call nothing more upstream.
 */
export class FencedPublishError extends Error {
  constructor(
    readonly askId: string,
    readonly reason: FenceReason,
  ) {
    super(
      reason === 'ended'
        ? `ask ${askId}: the stream already ended`
        : `ask ${askId}: this run is no longer the ask's current run`,
    );
    this.name = 'FencedPublishError';
  }
}

/**
 * Guarded XADD. KEYS: stream, meta. ARGV: type, data, claim token ('' for none), ttl seconds of a
 * finished ask, terminal types (comma-separated). Refuses after a terminal entry (checked on the
 * stream's last entry) and, with a token, unless the meta hash's `run` is that token.
 */
const PUBLISH_LUA = `
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
local terminal = {}
for t in string.gmatch(ARGV[5], '[^,]+') do terminal[t] = true end
if last then
  local fields = last[2]
  for i = 1, #fields, 2 do
    if fields[i] == 'type' and terminal[fields[i + 1]] then return {'ended', last[1]} end
  end
end
if ARGV[3] ~= '' and redis.call('HGET', KEYS[2], 'run') ~= ARGV[3] then return {'superseded', ''} end
local id = redis.call('XADD', KEYS[1], '*', 'type', ARGV[1], 'data', ARGV[2])
local ttl = tonumber(ARGV[4])
if terminal[ARGV[1]] then
  redis.call('EXPIRE', KEYS[1], ttl)
  if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('EXPIRE', KEYS[2], ttl) end
else
  redis.call('EXPIRE', KEYS[1], ttl * 2)
end
return {'ok', id}
`;

/** Claims an ask for a run. KEYS: meta. ARGV: token. Nil when the meta hash is gone (unknown ask). */
const CLAIM_LUA = `
if redis.call('HEXISTS', KEYS[1], 'projectId') == 0 then return false end
local run = redis.call('HINCRBY', KEYS[1], 'runs', 1)
redis.call('HSET', KEYS[1], 'run', ARGV[1])
return run
`;

/** The Lua commands this class defines on its connection. */
interface FencedRedis {
  askPublish(
    stream: string,
    meta: string,
    type: string,
    data: string,
    token: string,
    ttl: number,
    terminal: string,
  ): Promise<[string, string]>;
  askClaim(meta: string, token: string): Promise<number | null>;
}

/** The publish script queued on a MULTI (its reply is in the EXEC results). */
interface FencedPipeline {
  askPublish(
    stream: string,
    meta: string,
    type: string,
    data: string,
    token: string,
    ttl: number,
    terminal: string,
  ): unknown;
}

const TERMINAL_LIST = [...TERMINAL_EVENTS].join(',');

/**
 * One Redis stream per ask (`{prefix}:ask:{askId}:events`): workers append events, the gateway relays
 * them as SSE. The stream id of each entry is the SSE event id, so a client resuming with
 * `Last-Event-ID` gets every later event exactly once.
 *
 * Keys expire `ttlSeconds` after the terminal event (and, as a backstop, after the ask opens).
 */
export class AskEventStream {
  /**
   * @param hashTags 0 (one Redis server): keys `{prefix}:ask:{askId}:events` and `…:meta`. N > 0 (Redis
   *   Cluster): both keys of an ask carry the same one of N hash tags ({@link streamHashTag}), so each
   *   Lua script names one slot and a gateway's {@link StreamHub} reads every stream with ≤ N readers.
   *   Every process of a deployment must use the same value (`ASK_STREAM_HASH_TAGS`).
   */
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
    private readonly hashTags = 0,
  ) {
    // ioredis runs these with EVALSHA (EVAL on a cache miss, e.g. after a Redis restart).
    const commands = redis as unknown as Partial<FencedRedis>;
    if (!commands.askPublish) redis.defineCommand('askPublish', { numberOfKeys: 2, lua: PUBLISH_LUA });
    if (!commands.askClaim) redis.defineCommand('askClaim', { numberOfKeys: 1, lua: CLAIM_LUA });
  }

  private get fenced(): FencedRedis {
    return this.redis as unknown as FencedRedis;
  }

  /** The Redis key of the ask's event stream (`{prefix}:ask:{askId}:events`; with hash tags `{prefix}:ask:{tag}:{askId}:events`). */
  streamKey(askId: string): string {
    const tag = streamHashTag(this.prefix, askId, this.hashTags);
    return tag ? `${this.prefix}:ask:${tag}:${askId}:events` : `${this.prefix}:${askStreamKey(askId)}`;
  }

  /** The Redis key of the ask's meta hash (who owns it: {@link AskMeta}), beside its stream. */
  metaKey(askId: string): string {
    const tag = streamHashTag(this.prefix, askId, this.hashTags);
    return tag ? `${this.prefix}:ask:${tag}:${askId}:meta` : `${this.prefix}:ask:${askId}:meta`;
  }

  /**
   * Records who owns the ask and starts its expiry clock. With `accepted`, the ask's first event is
   * published in the same transaction (one round trip instead of two; the same guarded append as
   * {@link publish}) and its stream id returned.
   * @throws FencedPublishError when the stream already ended (an ask id reused).
   */
  open(askId: string, meta: AskMeta, accepted?: AskEventMap['accepted']): Promise<string | undefined> {
    if (!accepted) return this.openStream(askId, meta);
    return inSpan(
      'ask.publish accepted',
      () => ({ kind: SpanKind.PRODUCER, attributes: { 'ask.event.type': 'accepted' } }),
      () => this.openStream(askId, meta, accepted),
    );
  }

  private async openStream(
    askId: string,
    meta: AskMeta,
    accepted?: AskEventMap['accepted'],
  ): Promise<string | undefined> {
    const multi = this.redis
      .multi()
      .hset(this.metaKey(askId), meta as unknown as Record<string, string>)
      .expire(this.metaKey(askId), this.ttlSeconds * 2);
    if (accepted) {
      (multi as unknown as FencedPipeline).askPublish(
        this.streamKey(askId),
        this.metaKey(askId),
        'accepted',
        redactSecrets(JSON.stringify(accepted)),
        '',
        this.ttlSeconds,
        TERMINAL_LIST,
      );
    }
    const results = (await multi.exec()) ?? [];
    for (const [err] of results.slice(0, 2)) if (err) throw err;
    if (!accepted) return undefined;
    const [err, reply] = results[2] ?? [new Error(`ask ${askId}: no reply to the accepted event`), null];
    // A server that no longer knows the script (flushed while this connection stayed open): the
    // meta is written, the event is not; publish it on its own (ioredis resends it as EVAL).
    if (err && /NOSCRIPT/.test(err.message)) return this.publish(askId, 'accepted', accepted);
    if (err) throw err;
    const [status, id] = reply as [string, string];
    if (status !== 'ok') throw new FencedPublishError(askId, status as FenceReason);
    return id;
  }

  /** The ask's owner, or null when the ask is unknown (or expired). */
  async meta(askId: string): Promise<AskMeta | null> {
    return metaOf(await this.redis.hgetall(this.metaKey(askId)));
  }

  /**
   * Claims the ask for a run that is starting (see {@link RunClaim}); every earlier claim is fenced
   * from now on. Returns null when the ask's meta hash is gone (unknown, expired, or lost with Redis).
   */
  async claim(askId: string): Promise<RunClaim | null> {
    const token = randomUUID();
    const run = await this.fenced.askClaim(this.metaKey(askId), token);
    return run === null ? null : { askId, token, run: Number(run) };
  }

  /**
   * Appends one event; returns its stream id. Atomically (one Lua script) refuses when the stream
   * already ends with a terminal event, so the terminal event is always the last, and, when `claim`
   * is given, unless that claim is still the ask's current run. A terminal event (`done`, `error`)
   * also sets the expiry of the ask's keys. The exact value of every secret the process holds
   * (`redactSecrets`) is replaced by `***` in the event's data: this is the one door through which
   * text reaches SSE clients.
   * @throws FencedPublishError `ended` or `superseded`; nothing was written.
   */
  publish<T extends AskEventType>(askId: string, type: T, data: AskEventMap[T], claim?: RunClaim): Promise<string> {
    // Every event but the deltas is a span of its own (tracing on): a trace shows the ask's steps, not its chunks.
    if (type === 'delta') return this.append(askId, type, data, claim);
    return inSpan(
      `ask.publish ${type}`,
      () => ({ kind: SpanKind.PRODUCER, attributes: { 'ask.event.type': type } }),
      () => this.append(askId, type, data, claim),
    );
  }

  private async append<T extends AskEventType>(
    askId: string,
    type: T,
    data: AskEventMap[T],
    claim?: RunClaim,
  ): Promise<string> {
    const [status, id] = await this.fenced.askPublish(
      this.streamKey(askId),
      this.metaKey(askId),
      type,
      redactSecrets(JSON.stringify(data)),
      claim?.token ?? '',
      this.ttlSeconds,
      TERMINAL_LIST,
    );
    if (status !== 'ok') throw new FencedPublishError(askId, status as FenceReason);
    return id;
  }

  /** True while `claim` is the ask's current run and its stream has not ended (a check, not a fence). */
  async isCurrent(claim: RunClaim): Promise<boolean> {
    const [run, last] = await Promise.all([
      this.redis.hget(this.metaKey(claim.askId), 'run'),
      this.redis.xrevrange(this.streamKey(claim.askId), '+', '-', 'COUNT', 1),
    ]);
    const lastType = last[0] ? toEvent(last[0][0], last[0][1]).type : undefined;
    return run === claim.token && !(lastType && TERMINAL_EVENTS.has(lastType));
  }

  /** The ask's last event, or null when its stream is empty or gone. */
  async lastEvent(askId: string): Promise<AskEvent | null> {
    const [last] = await this.redis.xrevrange(this.streamKey(askId), '+', '-', 'COUNT', 1);
    return last ? toEvent(last[0], last[1]) : null;
  }

  /** Every event of the ask so far, oldest first. */
  async readAll(askId: string): Promise<AskEvent[]> {
    const entries = await this.redis.xrange(this.streamKey(askId), '-', '+');
    return entries.map(([id, fields]) => toEvent(id, fields));
  }
}

/** The meta of an ask from its meta hash as `HGETALL` answers it; null when the hash is gone (no `projectId`). */
export function metaOf(raw: Record<string, string> | null | undefined): AskMeta | null {
  if (!raw || !raw.projectId) return null;
  return {
    projectId: raw.projectId,
    sessionId: raw.sessionId,
    acceptedAt: raw.acceptedAt,
    ...(raw.keyId ? { keyId: raw.keyId } : {}),
  };
}

function toEvent(id: string, fields: string[]): AskEvent {
  const map: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) map[fields[i]] = fields[i + 1];
  return { id, type: map.type as AskEventType, data: JSON.parse(map.data ?? '{}') };
}
