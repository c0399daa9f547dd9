import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import { AskError, AskErrorCode, internalError, invalidRequest, isAskError, notFound, rateLimited, unauthorized } from '@ask/ask-errors';
import { PersistenceError } from '@ask/persistence';

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
    const error = toAskError(exception, this.logger);
    if (response.headersSent) {
      response.end();
      return;
    }
    const retryAfter = error.code === AskErrorCode.RateLimited ? /retry_after=(\d+)/.exec(error.details ?? '')?.[1] : undefined;
    if (retryAfter) response.setHeader('Retry-After', retryAfter);
    response.status(error.status).json(error.toBody());
  }
}

/** Maps any thrown value to an AskError (logging unknown ones with an id the caller can quote). */
export function toAskError(exception: unknown, logger: Logger): AskError {
  if (isAskError(exception)) return exception;
  // Persistence's own typed errors (missing encryption key, embedding space mismatch…) are the caller's to fix.
  if (exception instanceof PersistenceError) return invalidRequest(exception.message);
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
        return new AskError(AskErrorCode.InvalidRequest, { status: 413, error: 'request body too large', details: message });
      case HttpStatus.TOO_MANY_REQUESTS:
        return rateLimited();
      case HttpStatus.SERVICE_UNAVAILABLE:
        return new AskError(AskErrorCode.InternalError, { status, error: 'service unavailable', details: message });
      default:
        if (status >= 400 && status < 500) return new AskError(AskErrorCode.InvalidRequest, { status, details: message });
    }
  }
  // body-parser errors (malformed JSON, bad encoding, too large) carry a status of their own.
  const parserStatus = (exception as { status?: number; type?: string })?.status;
  if (typeof parserStatus === 'number' && parserStatus >= 400 && parserStatus < 500) {
    const type = (exception as { type?: string }).type ?? 'invalid body';
    return new AskError(AskErrorCode.InvalidRequest, {
      status: parserStatus,
      error: parserStatus === 413 ? 'request body too large' : 'malformed request body',
      details: type.replace(/\./g, ' '),
    });
  }
  const errorId = randomUUID();
  logger.error(`unhandled error ${errorId}: ${(exception as Error)?.stack ?? String(exception)}`);
  return internalError(errorId);
}

function httpMessage(exception: HttpException): string {
  const body = exception.getResponse();
  if (typeof body === 'string') return body;
  const message = (body as { message?: unknown }).message;
  if (Array.isArray(message)) return message.join('; ');
  return typeof message === 'string' ? message : exception.message;
}
