import 'reflect-metadata';
import { appConfig } from '@ask/config';
import { EVENTS_REDIS, pingMasters } from '@ask/event-stream';
import { bootWorker } from '@ask/observability';
import { SynthesisWorkerModule } from './synthesis-worker.module';
import './stand-in-cpu.metric';

/** Starts the synthesis worker (no HTTP server; health and metrics on SYNTHESIS_HEALTH_PORT). */
const config = appConfig();
bootWorker({
  name: 'synthesis-worker',
  module: SynthesisWorkerModule,
  config,
  healthPort: config.SYNTHESIS_HEALTH_PORT,
  redis: (app) => () => pingMasters(app.get(EVENTS_REDIS)),
}).catch((err) => {
  console.error(err);
  process.exit(1);
});
