import 'reflect-metadata';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { EVENTS_REDIS, pingMasters } from '@ask/event-stream';
import { bootWorker } from '@ask/observability';
import { RetrievalWorkerModule } from './retrieval-worker.module';

/** Starts the retrieval worker (no HTTP server; health and metrics on RETRIEVAL_HEALTH_PORT). */
bootWorker({
  name: 'retrieval-worker',
  module: RetrievalWorkerModule,
  healthPort: (app) => app.get<AppConfig>(APP_CONFIG).RETRIEVAL_HEALTH_PORT,
  redis: (app) => () => pingMasters(app.get(EVENTS_REDIS)),
}).catch((err) => {
  console.error(err);
  process.exit(1);
});
