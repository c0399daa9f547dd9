import { Global, Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import Redis from 'ioredis';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { AskEventStream } from './ask-event-stream';

/** Injection token of the shared (non-blocking) Redis connection used for events. */
export const EVENTS_REDIS = Symbol('EVENTS_REDIS');

/** Closes the events connection when the app shuts down. */
@Injectable()
class EventsRedisCloser implements OnApplicationShutdown {
  constructor(@Inject(EVENTS_REDIS) private readonly redis: Redis) {}
  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

/** Provides {@link AskEventStream} on the configured Redis, with the configured key prefix and TTL. */
@Global()
@Module({
  providers: [
    {
      provide: EVENTS_REDIS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => new Redis(config.REDIS_URL, { maxRetriesPerRequest: 3, enableOfflineQueue: true }),
    },
    {
      provide: AskEventStream,
      inject: [EVENTS_REDIS, APP_CONFIG],
      useFactory: (redis: Redis, config: AppConfig) => new AskEventStream(redis, config.ASK_KEY_PREFIX, config.ASK_EVENTS_TTL_S),
    },
    EventsRedisCloser,
  ],
  exports: [AskEventStream, EVENTS_REDIS],
})
export class EventStreamModule {}
