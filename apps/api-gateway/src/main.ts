import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, loadConfig } from '@ask/config';
import { startProcessTracing } from '@ask/observability';
import { createGateway } from './gateway.factory';

/** Starts the API gateway on GATEWAY_HOST:GATEWAY_PORT (loopback unless the environment says otherwise). */
async function bootstrap(): Promise<void> {
  // Off unless the operator set ASK_TRACING=otlp (docs/telemetry.md "Traces").
  startProcessTracing('api-gateway', loadConfig());
  const app = await createGateway();
  const config = app.get<AppConfig>(APP_CONFIG);
  await app.listen(config.GATEWAY_PORT, config.GATEWAY_HOST);
  new Logger('api-gateway').log(`listening on ${config.GATEWAY_HOST}:${config.GATEWAY_PORT}`);
}

bootstrap().catch((err) => {
  console.error(err);
  process.exit(1);
});
