import type Redis from 'ioredis';
import {
  askStreamKey,
  type AskEvent,
  type AskEventMap,
  type AskEventType,
  TERMINAL_EVENTS,
} from '@ask/ask-contracts';

/** Who an ask belongs to; stored beside its stream so the events route can check the caller's project. */
export interface AskMeta {
  projectId: string;
  sessionId: string;
  acceptedAt: string;
}

/** Options of {@link AskEventStream.read}. */
export interface ReadOptions {
  /** Redis stream id after which to read (`Last-Event-ID`); `0` reads from the start. */
  after?: string;
  /** How long one blocking read waits for new events, in milliseconds. */
  blockMs?: number;
  /** Stops the read (the SSE client went away). */
  signal?: AbortSignal;
  /** Gives up when no event arrives for this long, in milliseconds. */
  idleTimeoutMs?: number;
  /** Gives up at this time (epoch milliseconds) when no terminal event has come: the ask's deadline. */
  deadlineAt?: number;
}

const STREAM_ID = /^\d{1,20}-\d{1,20}$/;

/**
 * One Redis stream per ask (`{prefix}:ask:{askId}:events`): workers append events, the gateway relays
 * them as SSE. The stream id of each entry is the SSE event id, so a client resuming with
 * `Last-Event-ID` gets every later event exactly once.
 *
 * Keys expire `ttlSeconds` after the terminal event (and, as a backstop, after the ask opens).
 */
export class AskEventStream {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
  ) {}

  private streamKey(askId: string): string {
    return `${this.prefix}:${askStreamKey(askId)}`;
  }

  private metaKey(askId: string): string {
    return `${this.prefix}:ask:${askId}:meta`;
  }

  /** Records who owns the ask and starts its expiry clock. */
  async open(askId: string, meta: AskMeta): Promise<void> {
    await this.redis
      .multi()
      .hset(this.metaKey(askId), meta as unknown as Record<string, string>)
      .expire(this.metaKey(askId), this.ttlSeconds * 2)
      .exec();
  }

  /** The ask's owner, or null when the ask is unknown (or expired). */
  async meta(askId: string): Promise<AskMeta | null> {
    const raw = await this.redis.hgetall(this.metaKey(askId));
    if (!raw || !raw.projectId) return null;
    return { projectId: raw.projectId, sessionId: raw.sessionId, acceptedAt: raw.acceptedAt };
  }

  /**
   * Appends one event; returns its stream id. A terminal event (`done`, `error`) also sets the expiry
   * of the ask's keys.
   */
  async publish<T extends AskEventType>(askId: string, type: T, data: AskEventMap[T]): Promise<string> {
    const key = this.streamKey(askId);
    const pipeline = this.redis.multi().xadd(key, '*', 'type', type, 'data', JSON.stringify(data));
    pipeline.expire(key, TERMINAL_EVENTS.has(type) ? this.ttlSeconds : this.ttlSeconds * 2);
    if (TERMINAL_EVENTS.has(type)) pipeline.expire(this.metaKey(askId), this.ttlSeconds);
    const results = await pipeline.exec();
    const [err, id] = results?.[0] ?? [new Error('no reply from XADD'), null];
    if (err) throw err;
    return id as string;
  }

  /** Every event of the ask so far, oldest first. */
  async readAll(askId: string): Promise<AskEvent[]> {
    const entries = await this.redis.xrange(this.streamKey(askId), '-', '+');
    return entries.map(([id, fields]) => toEvent(id, fields));
  }

  /** True when the stream's last entry is terminal and its id is at or before `after`. */
  private async endedAtOrBefore(key: string, after: string): Promise<boolean> {
    const [last] = await this.redis.xrevrange(key, '+', '-', 'COUNT', 1);
    if (!last) return false;
    const event = toEvent(last[0], last[1]);
    return TERMINAL_EVENTS.has(event.type) && compareStreamIds(event.id, after) <= 0;
  }

  /** True when `id` is a well-formed stream id (`ms-seq`); anything else is rejected before Redis sees it. */
  static isStreamId(id: string): boolean {
    return STREAM_ID.test(id);
  }

  /**
   * Yields the ask's events after `options.after`, waiting for new ones, until a terminal event, the
   * signal, or `idleTimeoutMs` without an event. Uses its own Redis connection (blocking reads).
   */
  async *read(askId: string, options: ReadOptions = {}): AsyncGenerator<AskEvent> {
    const { blockMs = 5_000, signal, idleTimeoutMs = 300_000, deadlineAt = Number.POSITIVE_INFINITY } = options;
    let after = options.after && AskEventStream.isStreamId(options.after) ? options.after : '0';
    const key = this.streamKey(askId);
    const reader = this.redis.duplicate();
    const onAbort = () => reader.disconnect();
    signal?.addEventListener('abort', onAbort, { once: true });
    let lastEventAt = Date.now();
    try {
      // A client resuming after the terminal event has everything: end at once instead of waiting.
      if (after !== '0' && (await this.endedAtOrBefore(key, after))) return;
      while (!signal?.aborted) {
        const waitMs = Math.max(1, Math.min(blockMs, deadlineAt - Date.now()));
        const reply = await reader.xread('COUNT', 200, 'BLOCK', waitMs, 'STREAMS', key, after).catch((err) => {
          if (signal?.aborted) return null;
          throw err;
        });
        if (signal?.aborted) return;
        if (!reply) {
          if (Date.now() - lastEventAt > idleTimeoutMs || Date.now() >= deadlineAt) return;
          continue;
        }
        lastEventAt = Date.now();
        for (const [, entries] of reply) {
          for (const [id, fields] of entries) {
            after = id;
            const event = toEvent(id, fields);
            yield event;
            if (TERMINAL_EVENTS.has(event.type)) return;
          }
        }
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      reader.disconnect();
    }
  }
}

/** Compares two stream ids (`ms-seq`) numerically: negative when a < b. */
function compareStreamIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(BigInt);
  const [bm, bs] = b.split('-').map(BigInt);
  if (am !== bm) return am < bm ? -1 : 1;
  return as === bs ? 0 : as < bs ? -1 : 1;
}

function toEvent(id: string, fields: string[]): AskEvent {
  const map: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) map[fields[i]] = fields[i + 1];
  return { id, type: map.type as AskEventType, data: JSON.parse(map.data ?? '{}') };
}
