import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { AskEventRelay } from './ask-event-relay';
import { AskEventStream } from './ask-event-stream';
import { IngestionEventStream } from './ingestion-event-stream';
import { StreamHub } from './stream-hub';

/** Injection token of the shared (non-blocking) Redis connection used for events. */
export const EVENTS_REDIS = Symbol('EVENTS_REDIS');

/** Closes the stream hub's readers and the events connection when the app shuts down. */
@Injectable()
class EventsRedisCloser implements OnApplicationShutdown {
  constructor(
    @Inject(EVENTS_REDIS) private readonly redis: Redis,
    private readonly hub: StreamHub,
  ) {}
  async onApplicationShutdown(): Promise<void> {
    await this.hub.close();
    await this.redis.quit().catch(() => this.redis.disconnect());
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
        new Redis(config.REDIS_URL, {
          maxRetriesPerRequest: 3,
          enableOfflineQueue: true,
          connectionName: `${config.ASK_KEY_PREFIX}:events`,
        }),
    },
    {
      provide: StreamHub,
      inject: [EVENTS_REDIS, APP_CONFIG],
      useFactory: (redis: Redis, config: AppConfig) =>
        new StreamHub({
          control: redis,
          readers: config.ASK_STREAM_READERS,
          // Hash-tagged keys (a Redis Cluster): one reader per tag's slot, each XREAD on one slot.
          grouping: config.ASK_STREAM_HASH_TAGS > 0 ? 'slot' : 'shared',
          // A dedicated blocking connection per reader; a lost connection fails its read at once, and
          // the relays end their clients with a typed error (they resume with Last-Event-ID).
          connect: (index) =>
            redis.duplicate({
              connectionName: `${config.ASK_KEY_PREFIX}:events-reader:${index}`,
              maxRetriesPerRequest: 0,
            }),
        }),
    },
    {
      provide: AskEventRelay,
      inject: [EVENTS_REDIS, StreamHub, AskEventStream, APP_CONFIG],
      useFactory: (redis: Redis, hub: StreamHub, events: AskEventStream, config: AppConfig) =>
        new AskEventRelay(redis, hub, events, config.ASK_EVENTS_TTL_S),
    },
    {
      provide: AskEventStream,
      inject: [EVENTS_REDIS, APP_CONFIG],
      useFactory: (redis: Redis, config: AppConfig) =>
        new AskEventStream(redis, config.ASK_KEY_PREFIX, config.ASK_EVENTS_TTL_S, config.ASK_STREAM_HASH_TAGS),
    },
    {
      provide: IngestionEventStream,
      inject: [EVENTS_REDIS, StreamHub, APP_CONFIG],
      useFactory: (redis: Redis, hub: StreamHub, config: AppConfig) =>
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
  exports: [AskEventStream, IngestionEventStream, AskEventRelay, StreamHub, EVENTS_REDIS],
})
export class EventStreamModule {}
