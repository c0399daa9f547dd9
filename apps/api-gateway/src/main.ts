import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { appConfig } from '@ask/config';
import { startProcessTracing } from '@ask/observability';
import { createGateway } from './gateway.factory';

/** Starts the API gateway on GATEWAY_HOST:GATEWAY_PORT (loopback unless the environment says otherwise). */
async function bootstrap(): Promise<void> {
  // Off unless the operator set ASK_TRACING=otlp (docs/telemetry.md "Traces").
  const config = appConfig();
  startProcessTracing('api-gateway', config);
  const app = await createGateway();
  await app.listen(config.GATEWAY_PORT, config.GATEWAY_HOST);
  new Logger('api-gateway').log(`listening on ${config.GATEWAY_HOST}:${config.GATEWAY_PORT}`);
}

bootstrap().catch((err) => {
  console.error(err);
  process.exit(1);
});
