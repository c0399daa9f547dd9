import { type INestApplicationContext, Logger, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { startHealthServer } from './health-server';
import { QueueLoopHealth } from './queue-loop-health';
import type { AppConfig } from '@ask/config';
import { createNestJsonLogger } from './json-logger';
import { startProcessTracing } from './tracing';

/** How a worker app boots: its module, its name for logs, its config, its health port and where its Redis comes from. */
export interface WorkerBootOptions {
  name: string;
  module: Type<unknown>;
  /** The process's validated config (its entry point's `appConfig()`, the one its module provides). */
  config: Pick<
    AppConfig,
    | 'LOG_LEVEL'
    | 'WORKER_HEALTH_HOST'
    | 'ASK_METRICS_TOKEN'
    | 'ASK_TRACING'
    | 'OTEL_EXPORTER_OTLP_ENDPOINT'
    | 'OTEL_BSP_SCHEDULE_DELAY'
  >;
  /** The health/metrics port (from the config). */
  healthPort: number;
  /** The app's Redis check: resolves when every Redis server holding its keys answers (one server, or each Cluster master). */
  redis(app: INestApplicationContext): () => Promise<unknown>;
}

/**
 * Starts a worker: a Nest application context (no HTTP server) with shutdown hooks, plus its small
 * health/metrics port checking PostgreSQL, Redis and the worker's queue loops (`queues`: 503 while a
 * BullMQ worker's loop has failed within the last interval, {@link QueueLoopHealth}). SIGTERM closes the port, then Nest closes the
 * BullMQ workers (in-flight jobs finish or are handed back) and the connections.
 */
export async function bootWorker(options: WorkerBootOptions): Promise<INestApplicationContext> {
  // JSON lines at LOG_LEVEL, redacted (json-logger.ts); the ids of the job in hand come from withLogIds.
  const { config } = options;
  const logger = createNestJsonLogger({ app: options.name, level: config.LOG_LEVEL });
  // Off unless the operator set ASK_TRACING=otlp (docs/telemetry.md "Traces").
  startProcessTracing(options.name, config);
  const app = await NestFactory.createApplicationContext(options.module, { logger });
  app.enableShutdownHooks();
  const redis = options.redis(app);
  const db = app.get(DataSource);
  const loops = app.get(QueueLoopHealth, { strict: false });
  const health = await startHealthServer(
    { port: options.healthPort, host: config.WORKER_HEALTH_HOST, metricsToken: config.ASK_METRICS_TOKEN },
    {
      redis,
      postgres: () => db.query('SELECT 1'),
      queues: () => loops.check(),
    },
  );
  new Logger(options.name).log(`ready; health and metrics on ${config.WORKER_HEALTH_HOST}:${health.port}`);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void health.close());
  return app;
}
