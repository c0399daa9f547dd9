// eslint-disable-next-line @typescript-eslint/triple-slash-reference -- an ambient declaration (no module to import) that every program including this file needs
/// <reference path="./cluster-key-slot.d.ts" />
import calculateSlot from 'cluster-key-slot';
import type Redis from 'ioredis';
import { compareStreamIds } from './stream-ids';

/** One stream entry as Redis returns it: the id and the flat field/value list. */
export type StreamEntry = [id: string, fields: string[]];

/** What a {@link StreamHub} subscriber is told. */
export interface HubListener {
  /** New entries of the key, in stream order, each after the previous one delivered (no gap, no repeat). */
  onEntries(entries: StreamEntry[]): void;
  /** The reader failed (Redis went away); the subscription is over. */
  onError(err: unknown): void;
}

/** A live subscription; `close()` is idempotent. */
export interface HubSubscription {
  close(): void;
}

/** Options of {@link StreamHub}. */
export interface StreamHubOptions {
  /**
   * Opens reader connection `index` (0-based, in the order readers are first needed). Each reader holds
   * one blocking `XREAD` at a time and nothing else, so it must be a dedicated connection (e.g.
   * `redis.duplicate(...)` with `maxRetriesPerRequest: 0`, so that a lost connection fails the read at
   * once; keep the offline queue, which holds the first read until the connection is ready). With
   * `grouping: 'slot'`, `slot` is the one hash slot (0–16383) the reader reads: in a Redis Cluster,
   * connect to the master that serves it.
   */
  connect(index: number, slot?: number): Redis;
  /**
   * A non-blocking connection for `CLIENT UNBLOCK` (the app's shared command connection); with
   * `grouping: 'slot'` on a Cluster, a function of the reader's slot giving a connection to that
   * slot's master (a client id is only known to its own server).
   */
  control: Redis | ((slot: number) => Redis);
  /** Reader connections at most with `grouping: 'shared'` (keys are spread over them by hash slot); default 2. */
  readers?: number;
  /**
   * How keys are grouped into reads. `shared` (default; one Redis server): reader `slot % readers`
   * reads all its keys, of any slots, in one `XREAD`. `slot` (Redis Cluster, where one `XREAD` may
   * only name keys of one hash slot, else `CROSSSLOT`): one reader per hash slot in use, each `XREAD`
   * naming keys of its slot only. Keys should then carry one of a few hash tags
   * ({@link streamHashTag}), which bounds the readers by the number of tags.
   */
  grouping?: 'shared' | 'slot';
  /** How long one blocking read waits, in milliseconds; default 5,000. */
  blockMs?: number;
  /** Entries per key per read; default 200. */
  count?: number;
  /**
   * Pause after a read that returned entries before the next read, in milliseconds (default 5): under
   * load each read then carries the entries of many streams instead of one, which bounds the reads
   * per second of a reader whatever the number of events.
   */
  coalesceMs?: number;
}

interface Subscriber {
  key: string;
  /** Id of the last entry delivered (or the resume point). */
  cursor: string;
  listener: HubListener;
  closed: boolean;
}

/**
 * Serves any number of stream subscribers over a small fixed number of Redis connections: each reader
 * connection runs one blocking `XREAD` over every key its subscribers follow, each key read from the
 * oldest cursor among its subscribers, and hands each subscriber only the entries after its own
 * cursor. When a subscriber needs a key (or an older id) the running read does not name, the reader is
 * woken with `CLIENT UNBLOCK` from the control connection and re-armed with the new key set.
 *
 * Keys are assigned to readers by hash slot (`cluster-key-slot`): with `grouping: 'shared'` (one Redis
 * server) reader `slot % readers`, with `grouping: 'slot'` (a Redis Cluster, where one `XREAD` may only
 * name keys of one slot) one reader per slot, its keys under a few hash tags ({@link streamHashTag}).
 * Ordering: one reader per key, entries delivered in the order of the reply.
 */
export class StreamHub {
  /** Readers by group: `slot % readers` (`shared`) or the slot itself (`slot`). */
  private readonly readers = new Map<number, HubReader>();
  private readonly readerCount: number;
  private closed = false;

  constructor(private readonly options: StreamHubOptions) {
    this.readerCount = Math.max(1, options.readers ?? 2);
  }

  /**
   * Follows `key` after `cursor` (a stream id; `0` for the start). Entries already in the stream after
   * the cursor are delivered first, then new ones as they come, until `close()` or a reader failure.
   */
  subscribe(key: string, cursor: string, listener: HubListener): HubSubscription {
    if (this.closed) throw new Error('stream hub closed');
    const reader = this.readerFor(key);
    const subscriber: Subscriber = { key, cursor, listener, closed: false };
    reader.add(subscriber);
    return {
      close: () => {
        if (subscriber.closed) return;
        subscriber.closed = true;
        reader.remove(subscriber);
      },
    };
  }

  /** Reader connections opened so far, keys followed and subscribers, for metrics and tests. */
  stats(): { readers: number; keys: number; subscribers: number } {
    let keys = 0;
    let subscribers = 0;
    for (const reader of this.readers.values()) {
      keys += reader.keyCount;
      subscribers += reader.subscriberCount;
    }
    return { readers: this.readers.size, keys, subscribers };
  }

  /** The hash slot each reader reads (`grouping: 'slot'`), by reader index; empty with `shared`. */
  readerSlots(): number[] {
    if (this.options.grouping !== 'slot') return [];
    return [...this.readers.entries()].sort(([, a], [, b]) => a.index - b.index).map(([slot]) => slot);
  }

  /** Ends every subscription (without an error) and closes the reader connections. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.readers.values()].map((reader) => reader.close()));
  }

  /** The reader of a key (opened on first use): its slot's own (`slot`), or slot modulo the reader count. */
  private readerFor(key: string): HubReader {
    const slot = calculateSlot(key);
    const group = this.options.grouping === 'slot' ? slot : slot % this.readerCount;
    let reader = this.readers.get(group);
    if (!reader) {
      reader = new HubReader(this.readers.size, this.options.grouping === 'slot' ? slot : undefined, this.options);
      this.readers.set(group, reader);
    }
    return reader;
  }
}

/**
 * The hash tag of a stream of id `id` when streams are spread over `tags` hash tags (Redis Cluster):
 * `{<prefix>:s<n>}` with `n` = the id's own hash slot modulo `tags` (stable, uniform over UUIDs). Every
 * key of one ask (its stream and its meta) carries the same tag, so its Lua scripts name one slot;
 * a gateway then reads all streams with at most `tags` readers (`StreamHub` `grouping: 'slot'`).
 * Empty when `tags` is 0 (one Redis server: keys keep their untagged names).
 */
export function streamHashTag(prefix: string, id: string, tags: number): string {
  if (tags <= 0) return '';
  return `{${prefix}:s${calculateSlot(id) % tags}}`;
}

/** One reader connection and the keys it follows. */
class HubReader {
  private readonly keys = new Map<string, Set<Subscriber>>();
  private connection?: Redis;
  private clientId?: number;
  /** A read is in flight (or about to be sent). */
  private reading = false;
  /** The key set or a cursor changed since the in-flight read was built. */
  private stale = false;
  private waking = false;
  private closed = false;
  private idle?: () => void;
  private loop?: Promise<void>;

  constructor(
    readonly index: number,
    /** The one slot this reader reads (`grouping: 'slot'`), else undefined. */
    private readonly slot: number | undefined,
    private readonly options: StreamHubOptions,
  ) {}

  get keyCount(): number {
    return this.keys.size;
  }

  get subscriberCount(): number {
    let n = 0;
    for (const set of this.keys.values()) n += set.size;
    return n;
  }

  add(subscriber: Subscriber): void {
    let set = this.keys.get(subscriber.key);
    if (!set) this.keys.set(subscriber.key, (set = new Set()));
    set.add(subscriber);
    // The in-flight read may not name this key, or names it after a later id: re-arm it.
    this.stale = true;
    this.loop ??= this.run();
    this.idle?.();
    this.wake();
  }

  remove(subscriber: Subscriber): void {
    const set = this.keys.get(subscriber.key);
    if (!set) return;
    set.delete(subscriber);
    // A key nobody follows stays in the in-flight read until it returns; its entries are then dropped.
    if (set.size === 0) this.keys.delete(subscriber.key);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.keys.clear();
    this.idle?.();
    this.connection?.disconnect();
    await this.loop?.catch(() => undefined);
  }

  private conn(): Redis {
    if (!this.connection) {
      const connection = this.options.connect(this.index, this.slot);
      connection.on('error', () => undefined); // failures surface as rejected reads
      connection.on('close', () => (this.clientId = undefined));
      this.connection = connection;
    }
    return this.connection;
  }

  private async run(): Promise<void> {
    const { blockMs = 5_000, count = 200, coalesceMs = 5 } = this.options;
    while (!this.closed) {
      if (this.keys.size === 0) {
        await new Promise<void>((resolve) => (this.idle = resolve));
        this.idle = undefined;
        continue;
      }
      const connection = this.conn();
      // The read of each key starts at the oldest cursor among its subscribers.
      const names: string[] = [];
      const from = new Map<string, string>();
      for (const [key, set] of this.keys) {
        let oldest: string | undefined;
        for (const s of set) if (oldest === undefined || compareStreamIds(s.cursor, oldest) < 0) oldest = s.cursor;
        names.push(key);
        from.set(key, oldest ?? '0');
      }
      this.reading = true;
      this.stale = false;
      let reply: Array<[string, StreamEntry[]]> | null;
      try {
        this.clientId ??= Number(await connection.client('ID'));
        // Woken between building the read and sending it: build it again.
        if (this.stale) {
          this.reading = false;
          continue;
        }
        reply = (await connection.xread(
          'COUNT',
          count,
          'BLOCK',
          blockMs,
          'STREAMS',
          ...names,
          ...names.map((k) => from.get(k)!),
        )) as typeof reply;
      } catch (err) {
        this.reading = false;
        if (this.closed) return;
        this.failAll(err);
        // On a Cluster the slot's master may have changed (a restart, a failover, resharding): the
        // next read opens a connection to whichever master serves the slot then.
        if (this.slot !== undefined) this.dropConnection();
        await new Promise((r) => setTimeout(r, 100));
        continue;
      } finally {
        this.reading = false;
      }
      if (!reply) continue;
      for (const [key, entries] of reply) {
        const set = this.keys.get(key);
        const start = from.get(key);
        if (!set || start === undefined) continue;
        for (const subscriber of [...set]) {
          // A subscriber that joined with an older cursor than this read's waits for the next read
          // (which starts at its cursor): delivering these entries would skip the ones in between.
          if (subscriber.closed || compareStreamIds(subscriber.cursor, start) < 0) continue;
          let first = 0;
          while (first < entries.length && compareStreamIds(entries[first][0], subscriber.cursor) <= 0) first += 1;
          if (first === entries.length) continue;
          const fresh = first === 0 ? entries : entries.slice(first);
          subscriber.cursor = fresh[fresh.length - 1][0];
          try {
            subscriber.listener.onEntries(fresh);
          } catch {
            // a listener's failure is its own; the other subscribers still get their entries
          }
        }
      }
      if (coalesceMs > 0 && !this.stale) await new Promise((r) => setTimeout(r, coalesceMs));
    }
  }

  /** Wakes the in-flight blocking read so that the next one names the current keys and cursors. */
  private wake(): void {
    if (this.waking || !this.reading) return;
    this.waking = true;
    void (async () => {
      try {
        // CLIENT UNBLOCK answers 0 while the read is not yet blocked on the server: try again shortly.
        for (let attempt = 0; this.reading && this.stale && !this.closed && attempt < 1_000; attempt++) {
          if (this.clientId !== undefined) {
            const control =
              typeof this.options.control === 'function' ? this.options.control(this.slot ?? 0) : this.options.control;
            const unblocked = await control.client('UNBLOCK', this.clientId, 'TIMEOUT').catch(() => 0);
            if (Number(unblocked) === 1) return;
          }
          await new Promise((r) => setTimeout(r, 2));
        }
      } finally {
        this.waking = false;
      }
    })();
  }

  private dropConnection(): void {
    this.connection?.disconnect();
    this.connection = undefined;
    this.clientId = undefined;
  }

  private failAll(err: unknown): void {
    const all = [...this.keys.values()].flatMap((set) => [...set]);
    this.keys.clear();
    for (const subscriber of all) {
      subscriber.closed = true;
      try {
        subscriber.listener.onError(err);
      } catch {
        // ignore
      }
    }
  }
}
