import 'reflect-metadata';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { EVENTS_REDIS, pingMasters } from '@ask/event-stream';
import { bootWorker } from '@ask/observability';
import { IngestionWorkerModule } from './ingestion-worker.module';

/** Starts the ingestion worker (no HTTP server; health and metrics on INGESTION_HEALTH_PORT). */
bootWorker({
  name: 'ingestion-worker',
  module: IngestionWorkerModule,
  healthPort: (app) => app.get<AppConfig>(APP_CONFIG).INGESTION_HEALTH_PORT,
  redis: (app) => () => pingMasters(app.get(EVENTS_REDIS)),
}).catch((err) => {
  console.error(err);
  process.exit(1);
});
