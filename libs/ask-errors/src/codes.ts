/**
 * The machine-readable codes the /ask API and its SSE `error` event carry. The dashboard branches on
 * these, never on the human-readable `error` text (seed 000, "Typed errors"); they are stable.
 *
 * The first five are the seed's table; the next six are the API's own (validation, auth, lookups,
 * refused endpoints and settings (`forbidden`, 403), throttling, and the catch-all for errors that
 * are not ours); then the embedding codes of ingestion and re-embedding (a changed embedding model,
 * and the embedding provider's failures).
 */
export enum AskErrorCode {
  EmbeddingNotConfigured = 'embedding_not_configured',
  LlmNotConfigured = 'llm_not_configured',
  ContextOverflow = 'context_overflow',
  LlmUpstream = 'llm_upstream',
  LlmSynthesisFailed = 'llm_synthesis_failed',
  InvalidRequest = 'invalid_request',
  Unauthorized = 'unauthorized',
  NotFound = 'not_found',
  Forbidden = 'forbidden',
  RateLimited = 'rate_limited',
  InternalError = 'internal_error',
  /** The project's embedding model changed since its vectors were stored; re-embed before asking or loading more. */
  EmbeddingSpaceChanged = 'embedding_space_changed',
  /** The embedding provider rejected the project's credentials (upstream 401/403). */
  EmbeddingAuthFailed = 'embedding_auth_failed',
  /** The embedding provider returned vectors of another length than the project's settings. */
  EmbeddingDimensionsMismatch = 'embedding_dimensions_mismatch',
  /** Any other embedding-provider failure (4xx, 5xx after retries, an unusable answer). */
  EmbeddingUpstream = 'embedding_upstream',
  /**
   * A store the request needs is saturated or away (PostgreSQL out of connections, restarting, or
   * unreachable; Redis unreachable): retry after the `Retry-After` header's seconds.
   */
  ServiceUnavailable = 'service_unavailable',
}

/** Every code, in declaration order. */
export const ASK_ERROR_CODES: readonly AskErrorCode[] = Object.values(AskErrorCode);

/**
 * Default HTTP status per code. Source: seed 000 "Typed errors" table for the seed codes
 * (`llm_upstream` is 502, or 504 when the call was cancelled or timed out; see `llmUpstream`).
 */
export const ASK_ERROR_STATUS: Readonly<Record<AskErrorCode, number>> = {
  [AskErrorCode.EmbeddingNotConfigured]: 412,
  [AskErrorCode.LlmNotConfigured]: 412,
  [AskErrorCode.ContextOverflow]: 413,
  [AskErrorCode.LlmUpstream]: 502,
  [AskErrorCode.LlmSynthesisFailed]: 500,
  [AskErrorCode.InvalidRequest]: 400,
  [AskErrorCode.Unauthorized]: 401,
  [AskErrorCode.NotFound]: 404,
  [AskErrorCode.Forbidden]: 403,
  [AskErrorCode.RateLimited]: 429,
  [AskErrorCode.InternalError]: 500,
  [AskErrorCode.EmbeddingSpaceChanged]: 409,
  [AskErrorCode.EmbeddingAuthFailed]: 502,
  [AskErrorCode.EmbeddingDimensionsMismatch]: 502,
  [AskErrorCode.EmbeddingUpstream]: 502,
  [AskErrorCode.ServiceUnavailable]: 503,
};

/**
 * The short lowercase `error` message of the response body per code. `context_overflow`'s is the
 * seed's sample body verbatim; the others follow its form. The text may be reworded between releases;
 * clients branch on `code`.
 */
export const ERROR_MESSAGES: Readonly<Record<AskErrorCode, string>> = {
  [AskErrorCode.EmbeddingNotConfigured]: 'this project has no embedding provider configured',
  [AskErrorCode.LlmNotConfigured]: 'this project has no llm provider configured',
  [AskErrorCode.ContextOverflow]: "this conversation has grown past the model's context window",
  [AskErrorCode.LlmUpstream]: 'the llm provider rejected the request',
  [AskErrorCode.LlmSynthesisFailed]: 'the llm provider failed to answer this question',
  [AskErrorCode.InvalidRequest]: 'the request is invalid',
  [AskErrorCode.Unauthorized]: 'authentication is required',
  [AskErrorCode.NotFound]: 'not found',
  [AskErrorCode.Forbidden]: 'this setting or provider endpoint is not allowed',
  [AskErrorCode.RateLimited]: 'too many requests',
  [AskErrorCode.InternalError]: 'internal error',
  [AskErrorCode.EmbeddingSpaceChanged]: "this project's knowledge was embedded with another embedding model",
  [AskErrorCode.EmbeddingAuthFailed]: "the embedding provider rejected this project's credentials",
  [AskErrorCode.EmbeddingDimensionsMismatch]:
    "the embedding provider returned vectors of another length than the project's settings",
  [AskErrorCode.EmbeddingUpstream]: 'the embedding provider rejected the request',
  [AskErrorCode.ServiceUnavailable]: 'service unavailable',
};

/** The `error` message of a 504 `llm_upstream` (the provider call was cancelled or timed out). */
export const UPSTREAM_TIMEOUT_MESSAGE = 'the llm provider did not answer in time';

/**
 * What the dashboard shows per code. For the seed codes this is seed 000's "Dashboard surfaces" column
 * verbatim (the 504 `llm_upstream` row says "Same as 502 messaging", so both statuses share one copy).
 */
export const DASHBOARD_COPY: Readonly<Record<AskErrorCode, string>> = {
  [AskErrorCode.EmbeddingNotConfigured]:
    'This project has no embedding provider configured. Add one under project settings → Embedding to enable Ask.',
  [AskErrorCode.LlmNotConfigured]:
    'This project has no LLM provider configured. Add one under project settings → LLM to enable Ask.',
  [AskErrorCode.ContextOverflow]:
    "This conversation has grown past the model's context window. Start a new chat, or switch to a model with a wider context window.",
  [AskErrorCode.LlmUpstream]:
    'The LLM provider rejected the request. Try again; if it keeps happening, check provider credentials and quota.',
  [AskErrorCode.LlmSynthesisFailed]: 'The LLM provider failed to answer this question. Try again, or start a new chat.',
  [AskErrorCode.InvalidRequest]: 'The request could not be understood. Check the question and try again.',
  [AskErrorCode.Unauthorized]:
    'You are not signed in, or you do not have access to this project. Sign in and try again.',
  [AskErrorCode.NotFound]: 'This project or conversation could not be found.',
  [AskErrorCode.Forbidden]:
    "This project's provider settings point at an address the service may not reach. Ask the operator to allow-list the endpoint.",
  [AskErrorCode.RateLimited]: 'Too many questions in a short time. Wait a moment and try again.',
  [AskErrorCode.InternalError]: 'Something went wrong on our side. Try again in a moment.',
  [AskErrorCode.EmbeddingSpaceChanged]:
    "This project's embedding model changed since its knowledge was loaded. Re-embed the knowledge (Re-embed in project settings, or `ask reembed`) to ask or load more.",
  [AskErrorCode.EmbeddingAuthFailed]:
    "The embedding provider rejected this project's credentials. Update them under project settings → Embedding.",
  [AskErrorCode.EmbeddingDimensionsMismatch]:
    'The embedding model returns vectors of another length than the project is set to. Set the dimensions the model produces under project settings → Embedding.',
  [AskErrorCode.EmbeddingUpstream]:
    "The embedding provider rejected the request. Try again; if it keeps happening, check the embedding provider's settings and quota.",
  [AskErrorCode.ServiceUnavailable]: 'The service is busy right now. Try again in a few seconds.',
};

/** True when `value` is one of the `AskErrorCode` strings. */
export function isAskErrorCode(value: unknown): value is AskErrorCode {
  return typeof value === 'string' && (ASK_ERROR_CODES as readonly string[]).includes(value);
}
