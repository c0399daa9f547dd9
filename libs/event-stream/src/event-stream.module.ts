import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { AskEventRelay } from './ask-event-relay';
import { AskEventStream } from './ask-event-stream';
import { IngestionEventStream } from './ingestion-event-stream';
import { createRedisClient, isCluster, type RedisClient, slotControl, slotReader } from './redis-connections';
import { StreamHub } from './stream-hub';

/** Injection token of the shared (non-blocking) Redis connection used for events ({@link RedisClient}). */
export const EVENTS_REDIS = Symbol('EVENTS_REDIS');

/**
 * Injection token of BullMQ's own Cluster client (REDIS_CLUSTER_NODES set; `null` on one server, where
 * BullMQ opens its connections from REDIS_URL). Shared by the process's queues; BullMQ duplicates it
 * for each worker's blocking connection.
 */
export const BULLMQ_REDIS = Symbol('BULLMQ_REDIS');

/** Closes the stream hub's readers, the events connection and BullMQ's Cluster client when the app shuts down. */
@Injectable()
class EventsRedisCloser implements OnApplicationShutdown {
  constructor(
    @Inject(EVENTS_REDIS) private readonly redis: RedisClient,
    @Inject(BULLMQ_REDIS) private readonly bullmq: RedisClient | null,
    private readonly hub: StreamHub,
  ) {}
  async onApplicationShutdown(): Promise<void> {
    await this.hub.close();
    for (const client of [this.redis, this.bullmq]) {
      if (client) await client.quit().catch(() => client.disconnect());
    }
  }
}

/**
 * Provides {@link AskEventStream} (and {@link IngestionEventStream}, an ingestion's progress) on the configured Redis, with the configured key prefix and TTL, and
 * the read side of the SSE relay: one {@link StreamHub} per process (its reader connections open on the
 * first subscriber, so the workers never open any) and {@link AskEventRelay}.
 */
@Global()
@Module({
  providers: [
    {
      provide: EVENTS_REDIS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        createRedisClient(config, {
          maxRetriesPerRequest: 3,
          enableOfflineQueue: true,
          connectionName: `${config.ASK_KEY_PREFIX}:events`,
        }),
    },
    {
      provide: BULLMQ_REDIS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        config.REDIS_CLUSTER_NODES
          ? createRedisClient(config, { maxRetriesPerRequest: null, connectionName: `${config.ASK_KEY_PREFIX}:bullmq` })
          : null,
    },
    {
      provide: StreamHub,
      inject: [EVENTS_REDIS, APP_CONFIG],
      useFactory: (redis: RedisClient, config: AppConfig) =>
        new StreamHub({
          // On a Cluster, CLIENT UNBLOCK goes to the master that holds the reader's slot.
          control: isCluster(redis) ? (slot) => slotControl(redis, slot) : redis,
          readers: config.ASK_STREAM_READERS,
          // Hash-tagged keys (a Redis Cluster): one reader per tag's slot, each XREAD on one slot.
          grouping: config.ASK_STREAM_HASH_TAGS > 0 ? 'slot' : 'shared',
          // A dedicated blocking connection per reader; a lost connection fails its read at once, and
          // the relays end their clients with a typed error (they resume with Last-Event-ID).
          connect: (index, slot) =>
            slotReader(redis, slot, {
              connectionName: `${config.ASK_KEY_PREFIX}:events-reader:${index}`,
              maxRetriesPerRequest: 0,
            }),
        }),
    },
    {
      provide: AskEventRelay,
      inject: [EVENTS_REDIS, StreamHub, AskEventStream, APP_CONFIG],
      useFactory: (redis: RedisClient, hub: StreamHub, events: AskEventStream, config: AppConfig) =>
        new AskEventRelay(redis, hub, events, config.ASK_EVENTS_TTL_S),
    },
    {
      provide: AskEventStream,
      inject: [EVENTS_REDIS, APP_CONFIG],
      useFactory: (redis: RedisClient, config: AppConfig) =>
        new AskEventStream(redis, config.ASK_KEY_PREFIX, config.ASK_EVENTS_TTL_S, config.ASK_STREAM_HASH_TAGS),
    },
    {
      provide: IngestionEventStream,
      inject: [EVENTS_REDIS, StreamHub, APP_CONFIG],
      useFactory: (redis: RedisClient, hub: StreamHub, config: AppConfig) =>
        new IngestionEventStream(
          redis,
          config.ASK_KEY_PREFIX,
          config.ASK_EVENTS_TTL_S,
          hub,
          config.ASK_STREAM_HASH_TAGS,
        ),
    },
    EventsRedisCloser,
  ],
  exports: [AskEventStream, IngestionEventStream, AskEventRelay, StreamHub, EVENTS_REDIS, BULLMQ_REDIS],
})
export class EventStreamModule {}
