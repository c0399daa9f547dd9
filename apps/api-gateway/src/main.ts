import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { createGateway } from './gateway.factory';

/** Starts the API gateway on GATEWAY_PORT. */
async function bootstrap(): Promise<void> {
  const app = await createGateway();
  const config = app.get<AppConfig>(APP_CONFIG);
  await app.listen(config.GATEWAY_PORT, '0.0.0.0');
  new Logger('api-gateway').log(`listening on :${config.GATEWAY_PORT}`);
}

bootstrap().catch((err) => {
  console.error(err);
  process.exit(1);
});
