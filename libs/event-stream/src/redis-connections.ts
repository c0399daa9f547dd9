import Redis, { Cluster } from 'ioredis';
import type { AppConfig } from '@ask/config';

/**
 * The Redis client every app holds: one server (`Redis`, REDIS_URL) or a Redis Cluster (`Cluster`,
 * REDIS_CLUSTER_NODES). Both speak the same commands; on a Cluster every multi-key command, MULTI,
 * pipeline and Lua script must name keys of one hash slot (the key layouts below see to it).
 */
export type RedisClient = Redis | Cluster;

/** Options of {@link createRedisClient}: what differs between the apps' connections. */
export interface RedisClientOptions {
  /** `CLIENT SETNAME` of the connection (of each node connection on a Cluster). */
  connectionName: string;
  /** ioredis' retries of one command over reconnects (`null`: forever, as BullMQ's blocking connections need). */
  maxRetriesPerRequest?: number | null;
  enableOfflineQueue?: boolean;
}

/** True when `client` is an ioredis `Cluster`. */
export function isCluster(client: RedisClient): client is Cluster {
  return (client as Cluster).isCluster === true;
}

/**
 * The one place an app opens its shared Redis connection: a `Cluster` over REDIS_CLUSTER_NODES when
 * set (the other nodes are discovered; commands follow MOVED/ASK redirections; reads go to masters),
 * else a `Redis` on REDIS_URL. Blocking readers are not opened here: see {@link slotReader}.
 */
export function createRedisClient(config: AppConfig, options: RedisClientOptions): RedisClient {
  const { connectionName, maxRetriesPerRequest = 3, enableOfflineQueue = true } = options;
  if (config.REDIS_CLUSTER_NODES) {
    return new Cluster(
      config.REDIS_CLUSTER_NODES.map((node) => ({ ...node })),
      {
        enableOfflineQueue,
        scaleReads: 'master',
        // A master restart (no replica to fail over to): keep asking for the slot map until it is back.
        clusterRetryStrategy: (times) => Math.min(100 * times, 2_000),
        redisOptions: { connectionName, maxRetriesPerRequest },
      },
    );
  }
  return new Redis(config.REDIS_URL, { connectionName, maxRetriesPerRequest, enableOfflineQueue });
}

/**
 * A dedicated connection for one blocking reader (`XREAD BLOCK`) of keys of hash slot `slot`: on one
 * server a duplicate of `client`; on a Cluster a plain `Redis` on the master that serves the slot now
 * (from the client's slot map; the first node when the map is not loaded yet), since a Cluster client
 * may not hold a blocking read and `CLIENT UNBLOCK` must reach the server that holds it.
 */
export function slotReader(
  client: RedisClient,
  slot: number | undefined,
  options: { connectionName: string; maxRetriesPerRequest: number },
): Redis {
  if (!isCluster(client)) return client.duplicate(options);
  const node = masterOf(client, slot ?? 0);
  return new Redis({ ...client.options.redisOptions, ...node, ...options });
}

/**
 * A non-blocking connection to the master that serves `slot` (for `CLIENT UNBLOCK` of a reader on that
 * master): on one server `client` itself; on a Cluster the client's own connection to that node.
 */
export function slotControl(client: RedisClient, slot: number): Redis {
  if (!isCluster(client)) return client;
  const { host, port } = masterOf(client, slot);
  const node = client.nodes('master').find((n) => n.options.host === host && n.options.port === port);
  return node ?? client.nodes('master')[0];
}

/** Every server behind `client` that holds keys: the one server, or each Cluster master. */
export function masters(client: RedisClient): Redis[] {
  return isCluster(client) ? client.nodes('master') : [client];
}

/**
 * The BullMQ key prefix of queue `queue`: on one server the key prefix itself (keys
 * `{prefix}:{queue}:…`, as always); on a Cluster `{<prefix>:<queue>}`, one hash tag per queue, so
 * BullMQ's scripts (which name several keys of one queue) stay in one slot and the queues spread over
 * the masters. A prefix that already carries a `{tag}` is kept: everything then shares its slot.
 */
export function queuePrefix(config: AppConfig, queue: string): string {
  const prefix = config.ASK_KEY_PREFIX;
  if (!config.REDIS_CLUSTER_NODES || prefix.includes('{')) return prefix;
  return `{${prefix}:${queue}}`;
}

function masterOf(client: Cluster, slot: number): { host: string; port: number } {
  const key = client.slots[slot]?.[0];
  if (key) {
    const at = key.lastIndexOf(':');
    return { host: key.slice(0, at), port: Number(key.slice(at + 1)) };
  }
  const first = client.nodes('master')[0]?.options;
  return { host: first?.host ?? '127.0.0.1', port: first?.port ?? 6379 };
}

/**
 * PINGs every server behind `client` (each Cluster master): resolves when all answer, so a health
 * check fails when any master holding jobs or streams is away.
 * @throws the first failure (connection refused, CLUSTERDOWN, …).
 */
export async function pingMasters(client: RedisClient): Promise<void> {
  const nodes = masters(client);
  // A Cluster not yet connected has no node list: its own PING then waits for the slot map.
  await Promise.all(nodes.length > 0 ? nodes.map((node) => node.ping()) : [client.ping()]);
}
