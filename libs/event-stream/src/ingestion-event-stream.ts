import type { RedisClient } from './redis-connections';
import { streamHashTag, type StreamEntry, type StreamHub } from './stream-hub';
import { isValidStreamId } from './stream-ids';
import {
  INGESTION_TERMINAL_EVENTS,
  ingestionStreamKey,
  type IngestionEvent,
  type IngestionEventMap,
  type IngestionEventType,
} from '@ask/ask-contracts';

/** Options of {@link IngestionEventStream.read}. */
export interface IngestionReadOptions {
  /** Redis stream id after which to read (`Last-Event-ID`); absent reads from the start. */
  after?: string;
  /** How often a follower with no new event checks its idle timeout, in milliseconds (default 5,000). */
  blockMs?: number;
  /** Stops the read (the SSE client went away). */
  signal?: AbortSignal;
  /** Gives up when no event arrives for this long, in milliseconds (default 10 minutes). */
  idleTimeoutMs?: number;
}

/**
 * One Redis stream per ingestion (`{prefix}:ingestion:{ingestionId}:events`), the same design as an
 * ask's stream (`AskEventStream`): the ingestion worker appends `started`, `progress`,
 * `document_failed`, then `done` or `error`; the gateway relays them as SSE with each entry's stream
 * id as the SSE id, so `Last-Event-ID` resumes with no gap and no repeat. The stream expires
 * `ttlSeconds` after its terminal event (twice that after its last event otherwise). The durable
 * record of an ingestion is its PostgreSQL row; the stream is only the live feed.
 *
 * A follower of a live ingestion reads its backlog with `XRANGE` on the shared connection and then
 * new events through the process's {@link StreamHub} (the same few blocking reader connections as the
 * ask streams), so followers cost no Redis connection each; a finished ingestion is answered with one
 * `XRANGE`.
 */
export class IngestionEventStream {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
    private readonly hub: StreamHub,
    private readonly hashTags = 0,
  ) {}

  /**
   * `{prefix}:ingestion:{ingestionId}:events`; with `hashTags` N > 0 (a Redis Cluster, as
   * `ASK_STREAM_HASH_TAGS` for the ask streams) `{prefix}:ingestion:{tag}:{ingestionId}:events`, one of
   * N hash tags, so the hub's `slot` readers stay bounded by N.
   */
  private key(ingestionId: string): string {
    const tag = streamHashTag(this.prefix, ingestionId, this.hashTags);
    return tag
      ? `${this.prefix}:ingestion:${tag}:${ingestionId}:events`
      : `${this.prefix}:${ingestionStreamKey(ingestionId)}`;
  }

  /**
   * True when `id` is a stream id Redis accepts (`ms-seq`, both parts in 0 … 2^64 − 1): a part past
   * 2^64 − 1 would make XRANGE/XREAD fail after the SSE headers are sent, too late for a 400.
   */
  static isStreamId(id: string): boolean {
    return isValidStreamId(id);
  }

  /** Appends one event; returns its stream id. A terminal event sets the stream's expiry to `ttlSeconds`. */
  async publish<T extends IngestionEventType>(
    ingestionId: string,
    type: T,
    data: IngestionEventMap[T],
  ): Promise<string> {
    const key = this.key(ingestionId);
    const terminal = INGESTION_TERMINAL_EVENTS.has(type);
    const results = await this.redis
      .multi()
      .xadd(key, '*', 'type', type, 'data', JSON.stringify(data))
      .expire(key, terminal ? this.ttlSeconds : this.ttlSeconds * 2)
      .exec();
    const [err, id] = results?.[0] ?? [new Error('no reply from XADD'), null];
    if (err) throw err;
    return id as string;
  }

  /** Every event of the ingestion so far, oldest first (after `after` when given). */
  async readAll(ingestionId: string, after?: string): Promise<IngestionEvent[]> {
    const start = after && IngestionEventStream.isStreamId(after) ? `(${after}` : '-';
    const entries = await this.redis.xrange(this.key(ingestionId), start, '+');
    return entries.map(([id, fields]) => toEvent(id, fields));
  }

  /** Number of events in the ingestion's stream (0 when it never existed or has expired). */
  async length(ingestionId: string): Promise<number> {
    return this.redis.xlen(this.key(ingestionId));
  }

  /**
   * Yields the ingestion's events after `options.after`, waiting for new ones, until a terminal event,
   * the signal, or `idleTimeoutMs` without an event.
   */
  async *read(ingestionId: string, options: IngestionReadOptions = {}): AsyncGenerator<IngestionEvent> {
    const { blockMs = 5_000, signal, idleTimeoutMs = 600_000 } = options;
    let after = options.after && IngestionEventStream.isStreamId(options.after) ? options.after : '0';
    // What is there already, on the shared connection; a finished run needs nothing more.
    for (const event of await this.readAll(ingestionId, after === '0' ? undefined : after)) {
      after = event.id;
      yield event;
      if (INGESTION_TERMINAL_EVENTS.has(event.type)) return;
    }
    if (signal?.aborted) return;
    const key = this.key(ingestionId);
    // Resuming after the terminal event (or an id beyond it): everything was delivered, end at once.
    const [last] = await this.redis.xrevrange(key, '+', '-', 'COUNT', 1);
    if (last && INGESTION_TERMINAL_EVENTS.has(toEvent(last[0], last[1]).type)) return;
    yield* this.follow(key, after, blockMs, idleTimeoutMs, signal);
  }

  /** New entries of `key` after `after` through the stream hub, until terminal, abort, idle or failure. */
  private async *follow(
    key: string,
    after: string,
    blockMs: number,
    idleTimeoutMs: number,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<IngestionEvent> {
    const pending: StreamEntry[] = [];
    let failure: { err: unknown } | undefined;
    let wake: (() => void) | undefined;
    const subscription = this.hub.subscribe(key, after, {
      onEntries: (entries) => {
        pending.push(...entries);
        wake?.();
      },
      onError: (err) => {
        failure = { err };
        wake?.();
      },
    });
    const onAbort = () => wake?.();
    signal?.addEventListener('abort', onAbort, { once: true });
    let lastEventAt = Date.now();
    try {
      while (!signal?.aborted) {
        if (failure) throw failure.err;
        if (pending.length === 0) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, blockMs);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = undefined;
          if (pending.length === 0 && !failure && Date.now() - lastEventAt > idleTimeoutMs) return;
          continue;
        }
        lastEventAt = Date.now();
        for (const [id, fields] of pending.splice(0)) {
          const event = toEvent(id, fields);
          yield event;
          if (INGESTION_TERMINAL_EVENTS.has(event.type)) return;
        }
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      subscription.close();
    }
  }
}

function toEvent(id: string, fields: string[]): IngestionEvent {
  const map: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) map[fields[i]] = fields[i + 1];
  return { id, type: map.type as IngestionEventType, data: JSON.parse(map.data ?? '{}') };
}
