import 'reflect-metadata';
import { appConfig } from '@ask/config';
import { EVENTS_REDIS, pingMasters } from '@ask/event-stream';
import { bootWorker } from '@ask/observability';
import { RetrievalWorkerModule } from './retrieval-worker.module';

/** Starts the retrieval worker (no HTTP server; health and metrics on RETRIEVAL_HEALTH_PORT). */
const config = appConfig();
bootWorker({
  name: 'retrieval-worker',
  module: RetrievalWorkerModule,
  config,
  healthPort: config.RETRIEVAL_HEALTH_PORT,
  redis: (app) => () => pingMasters(app.get(EVENTS_REDIS)),
}).catch((err) => {
  console.error(err);
  process.exit(1);
});
