import type { NestExpressApplication } from '@nestjs/platform-express';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { AskErrorFilter, bodyParserErrorHandler } from './errors/ask-error.filter';
import { rejectInvalidUtf8, TextSafetyPipe } from './errors/text-safety.pipe';
import { askValidationPipe } from './errors/validation';

/** Largest request body accepted (JSON), in bytes. Ingestion of larger sets goes through the CLI. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** Builds the gateway app (shared by main and the tests). */
export async function createGateway(): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule, { bodyParser: false });
  app.useBodyParser('json', { limit: MAX_BODY_BYTES, strict: true, verify: rejectInvalidUtf8 });
  app.use(bodyParserErrorHandler());
  // Text safety first: it bounds the nesting depth before class-transformer recurses into the body.
  app.useGlobalPipes(new TextSafetyPipe(), askValidationPipe());
  app.useGlobalFilters(new AskErrorFilter());
  app.enableShutdownHooks();
  app.disable('x-powered-by');
  return app;
}
