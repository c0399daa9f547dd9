import { AskError } from './ask-error';
import { AskErrorCode, UPSTREAM_TIMEOUT_MESSAGE } from './codes';
import { sanitizeProviderMessage } from './sanitize';

/**
 * 412 `embedding_not_configured`: the project has no embedding provider set (seed 000), or the one
 * set lacks a setting or credential it needs.
 * @param details what is missing, e.g. `embedding provider=openai: apiKey is not set`; sanitised before use.
 */
export function embeddingNotConfigured(details?: string): AskError {
  return new AskError(AskErrorCode.EmbeddingNotConfigured, { details: optionalDetails(details) });
}

/**
 * 412 `llm_not_configured`: the project has no LLM provider set, or it failed to instantiate (seed 000).
 * @param details what failed, e.g. `provider=bedrock: missing region`; sanitised before use.
 */
export function llmNotConfigured(details?: string): AskError {
  return new AskError(AskErrorCode.LlmNotConfigured, { details: optionalDetails(details) });
}

/** The figures of a context overflow, all in tokens except `model`. */
export interface ContextOverflowFigures {
  /** The model id as the project names it. */
  model: string;
  /** The context window planned against. */
  window: number;
  /** Tokens of the current question. */
  question: number;
  /** Tokens of the retrieved insights and recommendations still in the prompt at the end. */
  rag: number;
  /** Tokens of the retrieved knowledge chunks still in the prompt at the end. */
  knowledge: number;
}

/**
 * 413 `context_overflow`: even after trimming history and shrinking the retrieved context to one item,
 * the request exceeds the model's window (seed 000). `details` is the seed's form:
 * `model=claude-sonnet-4-6 window=200000 question=12 rag=1200 knowledge=0`.
 */
export function contextOverflow(figures: ContextOverflowFigures): AskError {
  const { model, window, question, rag, knowledge } = figures;
  const safeModel = model.replace(/\s+/g, '_');
  return new AskError(AskErrorCode.ContextOverflow, {
    details: `model=${safeModel} window=${window} question=${question} rag=${rag} knowledge=${knowledge}`,
  });
}

/** What `questionOverflow` reports, in tokens except `model`. */
export interface QuestionOverflowFigures {
  model: string;
  /** The context window planned against. */
  window: number;
  maxTokens: number;
  /** Tokens of the question: the provider's own count when it disclosed the request's size, else ours. */
  question: number;
  /** The bare request's size (system prompt + question) as the provider disclosed it; absent: not disclosed. */
  prompt?: number;
}

/** The `error` of {@link questionOverflow}: the question alone, not the conversation, is too large. */
export const QUESTION_OVERFLOW_MESSAGE = "the question alone is too large for the model's context window";

/**
 * 413 `context_overflow` when the question itself cannot fit: even the bare request (system prompt +
 * question + max_tokens, no retrieved item and no earlier turn) was refused as too large by the
 * provider. Its `error` says so (not "this conversation has grown past…", which a
 * first turn would not understand); `details` name the question's size,
 * `model=gpt-4o window=8192 maxTokens=1024 question=9120 prompt=9180`.
 */
export function questionOverflow(figures: QuestionOverflowFigures): AskError {
  const { model, window, maxTokens, question, prompt } = figures;
  return new AskError(AskErrorCode.ContextOverflow, {
    error: QUESTION_OVERFLOW_MESSAGE,
    details: `model=${model.replace(/\s+/g, '_')} window=${window} maxTokens=${maxTokens} question=${question}${
      prompt === undefined ? '' : ` prompt=${prompt}`
    }`,
  });
}

/** The figures of settings that leave no room for a prompt, all in tokens except `model`. */
export interface SettingsOverflowFigures {
  model: string;
  /** The window planned against (catalog, override, cap, or a window the provider disclosed). */
  window: number;
  maxTokens: number;
  reserve: number;
  margin: number;
  /** window − maxTokens − reserve − margin (below 1). */
  available: number;
}

/**
 * 413 `context_overflow` for stored settings that no longer fit the window (a catalog change, or a
 * smaller window the provider disclosed): `max_tokens` + reserve + safety margin leave no token for
 * the question. The gateway refuses such settings when they are set (400); this is the ask-time form,
 * `model=local window=8192 maxTokens=8192 reserve=600 margin=410 available=-1010`.
 */
export function settingsOverflow(figures: SettingsOverflowFigures): AskError {
  const { model, window, maxTokens, reserve, margin, available } = figures;
  return new AskError(AskErrorCode.ContextOverflow, {
    details: `model=${model.replace(/\s+/g, '_')} window=${window} maxTokens=${maxTokens} reserve=${reserve} margin=${margin} available=${available}`,
  });
}

/**
 * `llm_upstream`: the provider rejected the call with a 4xx that is not a context overflow (rate limit,
 * content filter, billing) → 502; or the call was cancelled or its deadline passed (`timeout`) → 504.
 * Seed 000. The provider's message goes to `details` after `sanitizeProviderMessage`.
 */
export function llmUpstream(message: string, options: { timeout?: boolean; cause?: unknown } = {}): AskError {
  return new AskError(AskErrorCode.LlmUpstream, {
    status: options.timeout ? 504 : 502,
    error: options.timeout ? UPSTREAM_TIMEOUT_MESSAGE : undefined,
    details: optionalDetails(message),
    cause: options.cause,
  });
}

/** 500 `llm_synthesis_failed`: an unexpected provider failure (seed 000). `details` is sanitised. */
export function llmSynthesisFailed(details?: string, cause?: unknown): AskError {
  return new AskError(AskErrorCode.LlmSynthesisFailed, { details: optionalDetails(details), cause });
}

/** 400 `invalid_request`: the body failed validation; `details` says which field and why. */
export function invalidRequest(details?: string): AskError {
  return new AskError(AskErrorCode.InvalidRequest, { details: optionalDetails(details) });
}

/** 401 `unauthorized`: no valid credentials for the project. Never echoes the credential. */
export function unauthorized(details?: string): AskError {
  return new AskError(AskErrorCode.Unauthorized, { details: optionalDetails(details) });
}

/** 404 `not_found`: the project, session or ask does not exist (or is not the caller's). */
export function notFound(details?: string): AskError {
  return new AskError(AskErrorCode.NotFound, { details: optionalDetails(details) });
}

/**
 * 403 `forbidden`: the caller's key may not make this change (a project key setting a provider
 * `baseUrl` outside the operator's allow-list), or a provider endpoint was refused at connect time
 * (it resolved to an internal address, or a redirect led there). `details` names the field.
 */
export function forbidden(details?: string): AskError {
  return new AskError(AskErrorCode.Forbidden, { details: optionalDetails(details) });
}

/** 429 `rate_limited`: the caller asked too often; `retryAfterSeconds` goes to `details` when set. */
export function rateLimited(retryAfterSeconds?: number): AskError {
  return new AskError(AskErrorCode.RateLimited, {
    details: retryAfterSeconds === undefined ? undefined : `retry_after=${retryAfterSeconds}`,
  });
}

/**
 * 503 `service_unavailable`: a store is saturated or away (PostgreSQL out of connections or
 * restarting, Redis unreachable); the caller should retry after `retryAfterSeconds`, which goes to
 * `details` (`… retry_after=N`) and, at the gateway, to the `Retry-After` header.
 * @param reason what is unavailable, without any connection detail (no host, user or query).
 */
export function serviceUnavailable(reason: string, retryAfterSeconds: number): AskError {
  return new AskError(AskErrorCode.ServiceUnavailable, {
    details: `${reason}; retry_after=${Math.max(1, Math.ceil(retryAfterSeconds))}`,
  });
}

/** 500 `internal_error`: not one of ours. `errorId` (when given) goes to `details` to find the log line. */
export function internalError(errorId?: string, cause?: unknown): AskError {
  return new AskError(AskErrorCode.InternalError, {
    details: errorId === undefined ? undefined : `error_id=${errorId}`,
    cause,
  });
}

/**
 * 409 `embedding_space_changed`: the project stores vectors of another embedding model (or length)
 * than its settings now name, so its knowledge must be re-embedded (`POST …/reembed`) before an ask or
 * another upload. `details` names both: `stored=local/local-lexical-v1:256 current=openai/text-embedding-3-small:1536`.
 */
export function embeddingSpaceChanged(
  stored: ReadonlyArray<{ model: string; dimensions: number }>,
  current: { model: string; dimensions: number },
): AskError {
  const space = (s: { model: string; dimensions: number }) => `${s.model.replace(/\s+/g, '_')}:${s.dimensions}`;
  return new AskError(AskErrorCode.EmbeddingSpaceChanged, {
    details: `stored=${stored.map(space).join(',')} current=${space(current)}; re-embed the project (POST /api/v1/projects/:projectId/reembed)`,
  });
}

/** 502 `embedding_auth_failed`: the embedding provider answered 401/403 to the project's credentials. */
export function embeddingAuthFailed(details?: string, cause?: unknown): AskError {
  return new AskError(AskErrorCode.EmbeddingAuthFailed, { details: optionalDetails(details), cause });
}

/**
 * 502 `embedding_dimensions_mismatch`: the provider returned vectors of `received` numbers where the
 * project's settings say `expected` (or another number of vectors than texts sent).
 */
export function embeddingDimensionsMismatch(
  provider: string,
  expected: { vectors: number; dimensions: number },
  received: { vectors: number; dimensions: number },
  cause?: unknown,
): AskError {
  return new AskError(AskErrorCode.EmbeddingDimensionsMismatch, {
    details: `provider=${provider} expected_dimensions=${expected.dimensions} received_dimensions=${received.dimensions} expected_vectors=${expected.vectors} received_vectors=${received.vectors}`,
    cause,
  });
}

/** 502 `embedding_upstream` (504 when `timeout`): another embedding-provider failure; `details` is sanitised. */
export function embeddingUpstream(details?: string, options: { timeout?: boolean; cause?: unknown } = {}): AskError {
  return new AskError(AskErrorCode.EmbeddingUpstream, {
    status: options.timeout ? 504 : 502,
    details: optionalDetails(details),
    cause: options.cause,
  });
}

function optionalDetails(details: string | undefined): string | undefined {
  if (details === undefined) return undefined;
  const clean = sanitizeProviderMessage(details);
  return clean === '' ? undefined : clean;
}
