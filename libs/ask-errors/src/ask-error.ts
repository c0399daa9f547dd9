import { ASK_ERROR_STATUS, AskErrorCode, DASHBOARD_COPY, ERROR_MESSAGES, isAskErrorCode } from './codes';

/** The typed error body the API returns and the SSE `error` event repeats (seed 000's sample body). */
export interface AskErrorBody {
  error: string;
  code: AskErrorCode;
  details?: string;
}

/** An `AskErrorBody` with its HTTP status: the data of the SSE `error` event (ask-contracts `ErrorEvent`). */
export interface AskErrorEvent extends AskErrorBody {
  status: number;
}

/** Options of the `AskError` constructor. Everything defaults from the code. */
export interface AskErrorOptions {
  /** HTTP status; defaults to `ASK_ERROR_STATUS[code]`. */
  status?: number;
  /** Short lowercase message; defaults to `ERROR_MESSAGES[code]`. */
  error?: string;
  /** Machine-oriented detail (figures, a sanitised provider message). Never holds secrets. */
  details?: string;
  /** The underlying error, for logs only; never serialised into a body. */
  cause?: unknown;
}

/**
 * A domain error of the Ask service: one `AskErrorCode`, its HTTP status, the short `error` message,
 * optional `details`, and the dashboard copy for the code (`userMessage`).
 *
 * The body (`toBody`) is what goes out over HTTP and, with `status`, as the SSE `error` event.
 */
export class AskError extends Error {
  readonly status: number;
  readonly code: AskErrorCode;
  /** Short lowercase message of the body (seed 000 sample: "this conversation has grown past …"). */
  readonly error: string;
  readonly details?: string;
  /** The dashboard copy for `code` (seed 000 "Dashboard surfaces", verbatim). */
  readonly userMessage: string;

  constructor(code: AskErrorCode, options: AskErrorOptions = {}) {
    const error = options.error ?? ERROR_MESSAGES[code];
    super(options.details === undefined ? `${code}: ${error}` : `${code}: ${error} (${options.details})`, {
      cause: options.cause,
    });
    this.name = 'AskError';
    this.code = code;
    this.status = options.status ?? ASK_ERROR_STATUS[code];
    this.error = error;
    if (options.details !== undefined) this.details = options.details;
    this.userMessage = DASHBOARD_COPY[code];
  }

  /** The response body `{ error, code, details? }`; `details` is omitted when unset. */
  toBody(): AskErrorBody {
    return this.details === undefined
      ? { error: this.error, code: this.code }
      : { error: this.error, code: this.code, details: this.details };
  }

  /** The SSE `error` event data: the body plus the HTTP status. */
  toEvent(): AskErrorEvent {
    return { status: this.status, ...this.toBody() };
  }

  /**
   * Rebuilds an `AskError` from an `error` event or body read back from a stream or a job result.
   * An unrecognised code becomes `internal_error` (its text is not trusted).
   */
  static fromEvent(event: { status?: number; code: string; error?: string; details?: string }): AskError {
    if (!isAskErrorCode(event.code)) return new AskError(AskErrorCode.InternalError);
    return new AskError(event.code, { status: event.status, error: event.error, details: event.details });
  }
}

/**
 * True for an `AskError`, including one built by another copy of this module (checked by shape:
 * name `AskError`, a known code, a numeric status and `toBody`).
 */
export function isAskError(value: unknown): value is AskError {
  if (value instanceof AskError) return true;
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<AskError>;
  return (
    candidate.name === 'AskError' &&
    isAskErrorCode(candidate.code) &&
    typeof candidate.status === 'number' &&
    typeof candidate.toBody === 'function'
  );
}

/**
 * The SSE `error` event data `{ status, code, error, details? }` for any thrown value.
 *
 * An `AskError` maps to its own event. Anything else becomes 500 `internal_error` with no trace of
 * its message (which may hold internals); the caller logs the real error. When `errorId` is given it
 * goes into `details` as `error_id=<id>` so the log line can be found from the response.
 */
export function toErrorEvent(err: unknown, errorId?: string): AskErrorEvent {
  if (isAskError(err)) return { status: err.status, ...err.toBody() };
  const event: AskErrorEvent = {
    status: ASK_ERROR_STATUS[AskErrorCode.InternalError],
    code: AskErrorCode.InternalError,
    error: ERROR_MESSAGES[AskErrorCode.InternalError],
  };
  if (errorId !== undefined) event.details = `error_id=${errorId}`;
  return event;
}
