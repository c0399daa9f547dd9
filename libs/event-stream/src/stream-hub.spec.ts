import Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import calculateSlot from 'cluster-key-slot';
import { testRedisUrl } from '@ask/testing';
import { type StreamEntry, StreamHub, streamHashTag } from './stream-hub';

// Integration: the machine's real Redis, with a per-run key prefix and connection names of its own.
describe(StreamHub.name, () => {
  const url = testRedisUrl();
  const redis = new Redis(url);
  const prefix = `test-hub-${randomUUID()}`;
  const hubs: StreamHub[] = [];

  const newHub = (readers = 1, blockMs = 30_000) => {
    const name = `${prefix}:reader:${hubs.length}`;
    const hub = new StreamHub({
      control: redis,
      readers,
      blockMs,
      connect: (index) => new Redis(url, { connectionName: `${name}:${index}`, maxRetriesPerRequest: 0 }),
    });
    hubs.push(hub);
    return { hub, name };
  };
  /** Redis connections whose name starts with `name`. */
  const connectionsNamed = async (name: string) =>
    String(await redis.client('LIST'))
      .split('\n')
      .filter((line) => line.includes(` name=${name}`)).length;
  const until = async (check: () => boolean) => {
    while (!check()) await new Promise((r) => setTimeout(r, 10));
  };
  const texts = (entries: StreamEntry[]) => entries.map(([, fields]) => fields[1]);

  afterAll(async () => {
    await Promise.all(hubs.map((hub) => hub.close()));
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  describe('subscribe', () => {
    it('serves 300 subscribers on 300 streams over one reader connection, each getting exactly its own entries', async () => {
      const { hub, name } = newHub(1);
      const keys = Array.from({ length: 300 }, (_, i) => `${prefix}:many:${i}`);
      const seen = keys.map(() => [] as string[]);
      const subs = keys.map((key, i) =>
        hub.subscribe(key, '0', { onEntries: (e) => seen[i].push(...texts(e)), onError: () => undefined }),
      );
      await until(() => hub.stats().keys === 300);
      // Every stream gets two entries after all subscribed; the blocked read is woken for the new keys.
      for (const [i, key] of keys.entries()) await redis.xadd(key, '*', 'v', `${i}-a`);
      for (const [i, key] of keys.entries()) await redis.xadd(key, '*', 'v', `${i}-b`);
      await until(() => seen.every((s) => s.length === 2));
      expect(seen).toEqual(keys.map((_, i) => [`${i}-a`, `${i}-b`]));
      expect(await connectionsNamed(name)).toBe(1);
      expect(hub.stats()).toEqual({ readers: 1, keys: 300, subscribers: 300 });
      for (const sub of subs) sub.close();
      expect(hub.stats()).toEqual({ readers: 1, keys: 0, subscribers: 0 });
    });

    it('wakes a read blocked on other keys when a key is added (CLIENT UNBLOCK), with a 30 s block', async () => {
      const { hub } = newHub(1, 30_000);
      const first: string[] = [];
      const second: string[] = [];
      hub.subscribe(`${prefix}:wake:1`, '0', { onEntries: (e) => first.push(...texts(e)), onError: () => undefined });
      await new Promise((r) => setTimeout(r, 100)); // the read is now blocked on key 1 only
      await redis.xadd(`${prefix}:wake:2`, '*', 'v', 'x');
      hub.subscribe(`${prefix}:wake:2`, '0', { onEntries: (e) => second.push(...texts(e)), onError: () => undefined });
      await until(() => second.length === 1);
      expect(second).toEqual(['x']);
      expect(first).toEqual([]);
    });

    it('gives each subscriber of one stream the entries after its own cursor: no gap, no repeat', async () => {
      const { hub } = newHub(1);
      const key = `${prefix}:cursors`;
      const ids: string[] = [];
      for (const v of ['1', '2', '3']) ids.push((await redis.xadd(key, '*', 'v', v)) as string);
      const late: string[] = [];
      const early: string[] = [];
      hub.subscribe(key, ids[2], { onEntries: (e) => late.push(...texts(e)), onError: () => undefined });
      await redis.xadd(key, '*', 'v', '4');
      await until(() => late.length === 1);
      // Joins with an older cursor while the read waits after 4: the read is re-armed from its cursor.
      hub.subscribe(key, ids[0], { onEntries: (e) => early.push(...texts(e)), onError: () => undefined });
      await until(() => early.length === 3);
      await redis.xadd(key, '*', 'v', '5');
      await until(() => late.length === 2 && early.length === 4);
      expect(late).toEqual(['4', '5']);
      expect(early).toEqual(['2', '3', '4', '5']);
    });

    it("with grouping 'slot', reads keys of different hash slots with different readers and names one slot in every XREAD", async () => {
      // Every XREAD a reader sends, as the key names it carried (observed on the real connection).
      const reads: Array<{ slot: number | undefined; keys: string[] }> = [];
      const name = `${prefix}:slots`;
      const hub = new StreamHub({
        control: redis,
        grouping: 'slot',
        blockMs: 30_000,
        connect: (index, slot) => {
          const connection = new Redis(url, { connectionName: `${name}:${index}`, maxRetriesPerRequest: 0 });
          const xread = connection.xread.bind(connection) as (...args: unknown[]) => Promise<unknown>;
          (connection as unknown as { xread: typeof xread }).xread = (...args: unknown[]) => {
            const streams = args.indexOf('STREAMS');
            const names = args.slice(streams + 1);
            reads.push({ slot, keys: names.slice(0, names.length / 2) as string[] });
            return xread(...args);
          };
          return connection;
        },
      });
      hubs.push(hub);
      // 3 hash tags, 4 asks each: 12 streams in 3 slots, as AskEventStream names them with hashTags 3.
      const askIds = Array.from({ length: 12 }, () => randomUUID());
      const keyOf = (askId: string) => `${prefix}:ask:${streamHashTag(prefix, askId, 3)}:${askId}:events`;
      const keys = askIds.map(keyOf);
      const slots = [...new Set(keys.map((k) => calculateSlot(k)))].sort((a, b) => a - b);
      const seen = keys.map(() => [] as string[]);
      keys.forEach((key, i) =>
        hub.subscribe(key, '0', { onEntries: (e) => seen[i].push(...texts(e)), onError: () => undefined }),
      );
      for (const [i, key] of keys.entries()) await redis.xadd(key, '*', 'v', `${i}`);
      await until(() => seen.every((s) => s.length === 1));

      expect(seen).toEqual(keys.map((_, i) => [`${i}`]));
      expect(slots.length).toBe(new Set(askIds.map((id) => streamHashTag(prefix, id, 3))).size);
      expect([...hub.readerSlots()].sort((a, b) => a - b)).toEqual(slots);
      expect(hub.stats()).toEqual({ readers: slots.length, keys: 12, subscribers: 12 });
      expect(await connectionsNamed(`${name}:`)).toBe(slots.length);
      // Each read names the keys of its reader's slot only, and every key was read by its slot's reader.
      expect(reads.filter((r) => r.keys.some((k) => calculateSlot(k) !== r.slot))).toEqual([]);
      for (const key of keys)
        expect(reads.some((r) => r.slot === calculateSlot(key) && r.keys.includes(key))).toBe(true);
    });

    it("with grouping 'shared', reads keys of many slots over the configured readers (one Redis server)", async () => {
      const { hub, name } = newHub(2);
      const keys = Array.from({ length: 40 }, (_, i) => `${prefix}:shared:${i}`);
      expect(new Set(keys.map((k) => calculateSlot(k))).size).toBeGreaterThan(2);
      const seen = keys.map(() => [] as string[]);
      keys.forEach((key, i) =>
        hub.subscribe(key, '0', { onEntries: (e) => seen[i].push(...texts(e)), onError: () => undefined }),
      );
      for (const [i, key] of keys.entries()) await redis.xadd(key, '*', 'v', `${i}`);
      await until(() => seen.every((s) => s.length === 1));
      expect(hub.stats()).toEqual({ readers: 2, keys: 40, subscribers: 40 });
      expect(hub.readerSlots()).toEqual([]);
      expect(await connectionsNamed(`${name}:`)).toBe(2);
    });

    it('tells every subscriber of a reader when its connection is lost, and ends their subscriptions', async () => {
      const { hub, name } = newHub(1);
      const errors: string[] = [];
      for (let i = 0; i < 3; i++)
        hub.subscribe(`${prefix}:lost:${i}`, '0', {
          onEntries: () => undefined,
          onError: () => errors.push(`sub ${i}`),
        });
      await until(() => hub.stats().keys === 3);
      await new Promise((r) => setTimeout(r, 100));
      // Only this hub's reader, found by its connection name (never any other client of the shared Redis).
      const line = String(await redis.client('LIST'))
        .toString()
        .split('\n')
        .find((l) => l.includes(` name=${name}:0 `))!;
      await redis.client('KILL', 'ID', /\bid=(\d+)/.exec(line)![1]);
      await until(() => errors.length === 3);
      expect(errors.sort()).toEqual(['sub 0', 'sub 1', 'sub 2']);
      expect(hub.stats().subscribers).toBe(0);
    });
  });
});
