import {
  type DynamicModule,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { BullModule, getQueueToken, WorkerHost } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { QueueLoopHealth, watchQueues } from '@ask/observability';
import { QueueName } from '@ask/ask-contracts';
import { FairShare } from './fair-share';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { BULLMQ_REDIS, EVENTS_REDIS } from './event-stream.module';
import { masters, queuePrefix, type RedisClient } from './redis-connections';
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

/** How often one distinct queue error is logged at most, ms (a lost connection errors at each reconnect). */
export const QUEUE_ERROR_LOG_INTERVAL_MS = 10_000;

/**
 * Listens to the `error` events of the module's queues (the `Queue` clients that add and read jobs, in
 * the gateway and in both workers). A Node EventEmitter whose `error` has no listener throws it: a queue
 * whose Redis connection drops, or is closed while it is still connecting (an app closing right after
 * boot), would otherwise end the process with an unhandled error. Each distinct message (digits folded)
 * is logged at most once per {@link QUEUE_ERROR_LOG_INTERVAL_MS} as `queue <name>: <message>`, with how
 * many came since its last line; the message only, never the connection options.
 */
export class QueueErrorLog {
  private readonly loggedAt = new Map<string, { at: number; since: number }>();

  /**
   * @param queues the queues to listen to (anything with `name` and `on('error')`).
   * @param log where the lines go (the app's logger).
   * @param now the clock, ms.
   */
  constructor(
    queues: ReadonlyArray<{ name: string; on(event: 'error', listener: (err: Error) => void): unknown }>,
    private readonly log: (line: string) => void,
    private readonly now: () => number = Date.now,
  ) {
    for (const queue of queues) queue.on('error', (err) => this.record(queue.name, err));
  }

  private record(queue: string, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    const key = `${queue}\u0000${message.replace(/\d+/g, '#')}`;
    const at = this.now();
    const seen = this.loggedAt.get(key);
    if (seen && at - seen.at < QUEUE_ERROR_LOG_INTERVAL_MS) {
      seen.since += 1;
      return;
    }
    const more = seen && seen.since > 0 ? ` (${seen.since} more since the last line)` : '';
    this.log(`queue ${queue}: ${message}${more}`);
    this.loggedAt.set(key, { at, since: 0 });
  }
}

/**
 * Follows the `error` events of every BullMQ worker of the app (each `WorkerHost` processor's) in the
 * process's {@link QueueLoopHealth}, which the worker's `/health` checks (`bootWorker`): a worker
 * whose queue loop fails (connection, CROSSSLOT, script errors) answers 503 and logs one line per
 * distinct error per interval. The gateway has no worker: nothing to follow.
 */
@Injectable()
export class QueueLoopWatcher implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly health: QueueLoopHealth,
  ) {}

  onApplicationBootstrap(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!(instance instanceof WorkerHost)) continue;
      // Registered by @nestjs/bullmq in onModuleInit, so present here.
      this.health.watch(instance.worker.name, instance.worker);
    }
  }
}

/**
 * BullMQ on the configured Redis with the service's key prefix, plus the named queues: the one place
 * the gateway and both workers wire their queues, so they always agree on connection and prefix. On a
 * Redis Cluster every queue has its own hash tag ({@link queuePrefix}), and BullMQ runs on a Cluster
 * client; workers take the prefix of their queue's registration.
 */
@Module({})
export class AskQueuesModule {
  static forQueues(...queues: QueueName[]): DynamicModule {
    return {
      module: AskQueuesModule,
      imports: [
        DiscoveryModule,
        BullModule.forRootAsync({
          inject: [APP_CONFIG, EVENTS_REDIS, BULLMQ_REDIS],
          useFactory: async (config: AppConfig, redis: RedisClient, bullmq: RedisClient | null) => {
            // Every master of a Cluster: each holds jobs and streams.
            if (bullmq) await Promise.all(masters(await ready(redis)).map((node) => assertNoEviction(node)));
            else await assertNoEviction(redis);
            return { connection: bullmq ?? { url: config.REDIS_URL }, prefix: config.ASK_KEY_PREFIX };
          },
        }),
        BullModule.registerQueueAsync(
          ...queues.map((name) => ({
            name,
            inject: [APP_CONFIG],
            useFactory: (config: AppConfig) => ({ prefix: queuePrefix(config, name) }),
          })),
        ),
      ],
      providers: [
        {
          provide: QueueMetrics,
          inject: queues.map((name) => getQueueToken(name)),
          useFactory: (...qs: Queue[]) => new QueueMetrics(qs),
        },
        {
          provide: QueueErrorLog,
          inject: queues.map((name) => getQueueToken(name)),
          useFactory: (...qs: Queue[]) => {
            const logger = new Logger('Queue');
            return new QueueErrorLog(qs, (line) => logger.warn(line));
          },
        },
        {
          provide: QueueLoopHealth,
          useFactory: () => {
            const logger = new Logger('QueueLoop');
            return new QueueLoopHealth({ log: (line) => logger.error(line) });
          },
        },
        QueueLoopWatcher,
        {
          provide: FairShare,
          inject: [EVENTS_REDIS, APP_CONFIG],
          useFactory: (redis: RedisClient, config: AppConfig) =>
            new FairShare(redis, Object.fromEntries(queues.map((name) => [name, fairShareOf(config, name)]))),
        },
      ],
      exports: [BullModule, QueueLoopHealth, FairShare],
    };
  }
}

/** Resolves `client` once it is connected (a Cluster knows its masters only then). */
async function ready(client: RedisClient): Promise<RedisClient> {
  if (client.status === 'ready') return client;
  await client.ping();
  return client;
}

/** How long a parked job waits at most before it is tried again (promoted sooner when a slot frees), ms. */
const PARK_MS = 30_000;

/** A queue's fair share settings from the config: its cap per project, a lease past the ask's deadline. */
function fairShareOf(config: AppConfig, queue: QueueName) {
  const maxRunning =
    queue === QueueName.AskSynthesis
      ? config.SYNTHESIS_PROJECT_MAX_RUNNING
      : queue === QueueName.AskRetrieval
        ? config.RETRIEVAL_PROJECT_MAX_RUNNING
        : 0;
  return {
    enabled: config.ASK_FAIR_SHARES === 'on',
    prefix: queuePrefix(config, queue),
    maxRunning,
    leaseMs: config.ASK_DEADLINE_MS + 30_000,
    parkMs: PARK_MS,
  };
}
