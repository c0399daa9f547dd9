import type { NestExpressApplication } from '@nestjs/platform-express';
import { NestFactory } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';
import { appConfig } from '@ask/config';
import { createNestJsonLogger, type LogIds, withLogIds } from '@ask/observability';
import { AppModule } from './app.module';
import { AskErrorFilter, bodyParserErrorHandler } from './errors/ask-error.filter';
import { answerClientErrors } from './errors/client-error';
import { requireJsonBody } from './errors/media-type';
import { rejectInvalidUtf8, TextSafetyPipe } from './errors/text-safety.pipe';
import { askValidationPipe } from './errors/validation';

/** Largest request body accepted (JSON), in bytes. Ingestion of larger sets goes through the CLI. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

/**
 * Security headers (helmet), fitted to the dashboard served at `/`: a Vite bundle of same-origin
 * scripts and stylesheets that calls the API and opens EventSource on the same origin. No inline
 * script or style, no framing (`frame-ancestors 'none'`, `X-Frame-Options: DENY`), no referrer (the
 * events URL carries a token). `upgrade-insecure-requests` is off: the gateway is often reached over
 * plain http on a private address, where it would break the page.
 */
export const SECURITY_HEADERS = helmet({
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      baseUri: ["'self'"],
      connectSrc: ["'self'"],
      fontSrc: ["'self'", 'data:'],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      imgSrc: ["'self'", 'data:'],
      objectSrc: ["'none'"],
      scriptSrc: ["'self'"],
      scriptSrcAttr: ["'none'"],
      styleSrc: ["'self'"],
    },
  },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
});

/**
 * `Cache-Control: no-store` on every API answer: new API keys, events URLs with their token, answers
 * and settings are per-caller and must not be kept by a browser or proxy cache.
 */
export function noStore(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Cache-Control', 'no-store');
  next();
}

const UUID = '[0-9a-fA-F-]{36}';
const ID_PATTERNS: Array<[keyof LogIds, RegExp]> = [
  ['projectId', new RegExp(`/projects/(${UUID})`)],
  ['sessionId', new RegExp(`/sessions/(${UUID})`)],
  ['askId', new RegExp(`/asks/(${UUID})`)],
];

/** The project, session and ask ids a request path names (`/api/v1/projects/:projectId/sessions/:sessionId`…). */
export function logIdsOfPath(path: string): LogIds {
  const ids: LogIds = {};
  for (const [key, re] of ID_PATTERNS) {
    const m = re.exec(path);
    if (m) ids[key] = m[1];
  }
  return ids;
}

/** Every log line written while a request is handled carries the ids its path names. */
export function requestLogIds(req: Request, _res: Response, next: NextFunction): void {
  withLogIds(logIdsOfPath(req.path), next);
}

/** Builds the gateway app (shared by main and the tests). */
export async function createGateway(): Promise<NestExpressApplication> {
  // JSON lines at LOG_LEVEL, redacted (libs/observability json-logger.ts); the config AppModule provides.
  const logger = createNestJsonLogger({ app: 'api-gateway', level: appConfig().LOG_LEVEL });
  const app = await NestFactory.create<NestExpressApplication>(AppModule, { bodyParser: false, logger });
  app.use(requestLogIds);
  app.use(SECURITY_HEADERS);
  app.use('/api', noStore);
  app.use(requireJsonBody);
  app.useBodyParser('json', { limit: MAX_BODY_BYTES, strict: true, verify: rejectInvalidUtf8 });
  app.use(bodyParserErrorHandler());
  // Text safety first: it bounds the nesting depth before class-transformer recurses into the body.
  app.useGlobalPipes(new TextSafetyPipe(), askValidationPipe());
  app.useGlobalFilters(new AskErrorFilter());
  app.enableShutdownHooks();
  app.disable('x-powered-by');
  answerClientErrors(app.getHttpServer());
  return app;
}
