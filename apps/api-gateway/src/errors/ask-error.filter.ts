import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import {
  AskError,
  type AskErrorBody,
  AskErrorCode,
  internalError,
  invalidRequest,
  isAskError,
  notFound,
  rateLimited,
  redactSecrets,
  serviceUnavailable,
  unauthorized,
} from '@ask/ask-errors';
import { PersistenceError } from '@ask/persistence';
import { unsupportedCharset } from './text-safety.pipe';

/**
 * The one HTTP exception filter: every error leaves as the typed body `{ error, code, details? }`.
 * AskErrors keep their status and code; Nest's HTTP exceptions (validation, 404 routes, body too
 * large) map to the nearest code; anything else is a 500 `internal_error` carrying only an error id,
 * while the real error goes to the log.
 */
@Catch()
export class AskErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const error = askErrorOf(exception, this.logger);
    if (response.headersSent) {
      response.end();
      return;
    }
    const retryAfter =
      error.code === AskErrorCode.RateLimited || error.code === AskErrorCode.ServiceUnavailable
        ? /retry_after=(\d+)/.exec(error.details ?? '')?.[1]
        : undefined;
    if (retryAfter) response.setHeader('Retry-After', retryAfter);
    response.status(error.status).json(redactedBody(error));
  }
}

/**
 * Express error middleware mounted right after the body parser: answers a body-parser failure
 * (malformed JSON 400, invalid UTF-8 400, body over the limit 413) with the typed body at once. Later
 * error middleware (the dashboard's static serving) would otherwise turn it into a 404 on `/api` paths.
 */
export function bodyParserErrorHandler(logger = new Logger('HTTP')) {
  return (err: unknown, _req: unknown, res: Response, next: (err?: unknown) => void): void => {
    if (res.headersSent) return next(err);
    const error = askErrorOf(err, logger);
    res.status(error.status).json(redactedBody(error));
  };
}

/** The error body with the exact value of every secret the process holds replaced by `***`. */
export function redactedBody(error: AskError): AskErrorBody {
  const body = error.toBody();
  return body.details === undefined
    ? { ...body, error: redactSecrets(body.error) }
    : { ...body, error: redactSecrets(body.error), details: redactSecrets(body.details) };
}

/** Maps any thrown value to an AskError (logging unknown ones with an id the caller can quote). */
export function askErrorOf(exception: unknown, logger: Logger): AskError {
  if (isAskError(exception)) return exception;
  if (exception instanceof PersistenceError) return persistenceErrorOf(exception, logger);
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    const message = httpMessage(exception);
    switch (status) {
      case HttpStatus.BAD_REQUEST:
        return invalidRequest(message);
      case HttpStatus.UNAUTHORIZED:
        return unauthorized();
      case HttpStatus.NOT_FOUND:
        return notFound(message);
      case HttpStatus.PAYLOAD_TOO_LARGE:
        return new AskError(AskErrorCode.InvalidRequest, {
          status: 413,
          error: 'request body too large',
          details: message,
        });
      case HttpStatus.TOO_MANY_REQUESTS:
        return rateLimited();
      case HttpStatus.SERVICE_UNAVAILABLE:
        return new AskError(AskErrorCode.InternalError, { status, error: 'service unavailable', details: message });
      default:
        if (status >= 400 && status < 500)
          return new AskError(AskErrorCode.InvalidRequest, { status, details: message });
    }
  }
  // body-parser errors (malformed JSON, bad encoding, too large) carry a status of their own.
  const parserStatus = (exception as { status?: number; type?: string })?.status;
  if (typeof parserStatus === 'number' && parserStatus >= 400 && parserStatus < 500) {
    const type = (exception as { type?: string }).type ?? 'invalid body';
    const charset = (exception as { charset?: unknown }).charset;
    if (type === 'charset.unsupported' && typeof charset === 'string') return unsupportedCharset(charset);
    return new AskError(AskErrorCode.InvalidRequest, {
      status: parserStatus,
      error: parserStatus === 413 ? 'request body too large' : 'malformed request body',
      details: `body: ${PARSER_DETAILS[type] ?? type.replace(/\./g, ' ')}`,
    });
  }
  if (isStoreSaturated(exception)) {
    logger.warn(`store saturated: ${(exception as Error).name}: ${(exception as Error).message}`);
    return serviceUnavailable('the database has no free connection', STORE_RETRY_AFTER_S);
  }
  if (isStoreUnavailable(exception)) {
    logger.warn(`store unavailable: ${(exception as Error).name}: ${(exception as Error).message}`);
    return serviceUnavailable('the database or the queue is unreachable', STORE_RETRY_AFTER_S);
  }
  const errorId = randomUUID();
  logger.error(`unhandled error ${errorId}: ${(exception as Error)?.stack ?? String(exception)}`);
  return internalError(errorId);
}

/**
 * A persistence error by its code (an exhaustive switch: a new code does not compile until it is
 * mapped). The caller's to fix: a session or project that is not there (404), a bad argument (400), a
 * write into a project whose stored vectors are of another embedding space (409
 * `embedding_space_changed`, its message says how to re-embed). The operator's: an encryption key
 * missing or invalid, stored credentials that no longer decrypt: 500 `internal_error` with an error id
 * (logged with the message), never the internal text in the body.
 */
export function persistenceErrorOf(error: PersistenceError, logger: Logger): AskError {
  switch (error.code) {
    case 'session_not_found':
    case 'project_not_found':
      return notFound(error.message);
    case 'invalid_argument':
      return invalidRequest(error.message);
    case 'embedding_dimensions_mismatch':
      return new AskError(AskErrorCode.EmbeddingSpaceChanged, { details: error.message });
    case 'encryption_key_missing':
    case 'encryption_key_invalid':
    case 'credentials_undecryptable': {
      const errorId = randomUUID();
      logger.error(`server-side persistence fault ${errorId}: ${error.name} (${error.code}): ${error.message}`);
      return internalError(errorId);
    }
    default: {
      const unmapped: never = error.code;
      throw new Error(`unmapped persistence error code ${String(unmapped)}`);
    }
  }
}

/** The `Retry-After` of a 503 for a saturated or unreachable store, in seconds (a pool frees within one). */
export const STORE_RETRY_AFTER_S = 1;

/**
 * PostgreSQL out of connections: the server refused a new one (SQLSTATE 53300 `too_many_connections`,
 * "sorry, too many clients already"; 53000 `insufficient_resources`), or the process's pool could not
 * hand one out within DATABASE_CONNECT_TIMEOUT_MS (pg-pool's "timeout exceeded when trying to
 * connect"). Checked on the error and on TypeORM's `driverError`.
 */
export function isStoreSaturated(exception: unknown): boolean {
  for (
    let error = exception as { code?: string; message?: string; driverError?: unknown } | undefined, depth = 0;
    error && depth < 3;
    depth++
  ) {
    if (error.code === '53300' || error.code === '53000') return true;
    if (typeof error.message === 'string' && /^timeout exceeded when trying to connect/.test(error.message))
      return true;
    error = error.driverError as typeof error;
  }
  return false;
}

/** Socket errors of a store that is down or restarting (PostgreSQL, Redis). */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);
/** PostgreSQL shutting down or starting (57P01-57P03), and the connection exception class 08. */
const UNAVAILABLE_SQLSTATE = /^(57P0[123]|08\d{3})$/;

/**
 * True when PostgreSQL or Redis could not be reached (a restart, a failover): the request may be
 * retried, so it is a 503 rather than a 500. Covers pg socket errors and its "Connection terminated"
 * (also as TypeORM's QueryFailedError.driverError), and ioredis giving up on a command while it
 * reconnects (MaxRetriesPerRequestError, "Connection is closed.").
 */
export function isStoreUnavailable(exception: unknown): boolean {
  for (
    let error = exception as { name?: string; code?: string; message?: string; driverError?: unknown } | undefined,
      depth = 0;
    error && depth < 3;
    depth++
  ) {
    if (error.name === 'MaxRetriesPerRequestError') return true;
    if (typeof error.code === 'string' && (UNREACHABLE_CODES.has(error.code) || UNAVAILABLE_SQLSTATE.test(error.code)))
      return true;
    if (typeof error.message === 'string' && /^(Connection terminated|Connection is closed\.)/.test(error.message))
      return true;
    error = error.driverError as typeof error;
  }
  return false;
}

/** What each body-parser failure means, for the `details` of the 4xx (never the body itself). */
const PARSER_DETAILS: Record<string, string> = {
  'entity.parse.failed': 'not valid JSON (an object is expected)',
  'entity.too.large': 'larger than the 8 MiB limit',
  'encoding.unsupported': 'unsupported content encoding',
  'charset.unsupported': 'unsupported charset (UTF-8 only)',
  'request.aborted': 'request aborted',
  'request.size.invalid': 'size does not match content-length',
};

function httpMessage(exception: HttpException): string {
  const body = exception.getResponse();
  if (typeof body === 'string') return body;
  const message = (body as { message?: unknown }).message;
  if (Array.isArray(message)) return message.join('; ');
  return typeof message === 'string' ? message : exception.message;
}
