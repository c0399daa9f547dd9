import 'reflect-metadata';
import { appConfig } from '@ask/config';
import { EVENTS_REDIS, pingMasters } from '@ask/event-stream';
import { bootWorker } from '@ask/observability';
import { IngestionWorkerModule } from './ingestion-worker.module';

/** Starts the ingestion worker (no HTTP server; health and metrics on INGESTION_HEALTH_PORT). */
const config = appConfig();
bootWorker({
  name: 'ingestion-worker',
  module: IngestionWorkerModule,
  config,
  healthPort: config.INGESTION_HEALTH_PORT,
  redis: (app) => () => pingMasters(app.get(EVENTS_REDIS)),
}).catch((err) => {
  console.error(err);
  process.exit(1);
});
