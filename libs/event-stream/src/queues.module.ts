import { type DynamicModule, Injectable, Module, type OnModuleDestroy } from '@nestjs/common';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { watchQueues } from '@ask/observability';
import type { QueueName } from '@ask/ask-contracts';
import type Redis from 'ioredis';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { EVENTS_REDIS } from './event-stream.module';
import { assertNoEviction } from './redis-policy';

/** Reports the module's queues on this process's `/metrics` (depth per state, oldest waiting age) while it lives. */
@Injectable()
export class QueueMetrics implements OnModuleDestroy {
  private readonly stop: () => void;

  constructor(queues: Queue[]) {
    this.stop = watchQueues(queues);
  }

  onModuleDestroy(): void {
    this.stop();
  }
}

/**
 * BullMQ on the configured Redis with the service's key prefix, plus the named queues: the one place
 * the gateway and both workers wire their queues, so they always agree on connection and prefix.
 */
@Module({})
export class AskQueuesModule {
  static forQueues(...queues: QueueName[]): DynamicModule {
    return {
      module: AskQueuesModule,
      imports: [
        BullModule.forRootAsync({
          inject: [APP_CONFIG, EVENTS_REDIS],
          useFactory: async (config: AppConfig, redis: Redis) => {
            await assertNoEviction(redis);
            return { connection: { url: config.REDIS_URL }, prefix: config.ASK_KEY_PREFIX };
          },
        }),
        BullModule.registerQueue(...queues.map((name) => ({ name }))),
      ],
      providers: [
        {
          provide: QueueMetrics,
          inject: queues.map((name) => getQueueToken(name)),
          useFactory: (...qs: Queue[]) => new QueueMetrics(qs),
        },
      ],
      exports: [BullModule],
    };
  }
}
