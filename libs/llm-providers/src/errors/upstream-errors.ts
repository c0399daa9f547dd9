import type { ProviderId } from '@ask/model-catalog';

/**
 * How a failed provider call is to be handled, as decided by `classifyUpstreamError`.
 *
 * - `overflow`: the prompt did not fit the model's context window. Never retried as-is; the caller
 *   re-budgets below `limit` (tokens, when the provider disclosed it) and retries once.
 *   `actual` is the token count the provider measured against that limit (the prompt, or the prompt
 *   plus `max_tokens` for providers that add them, e.g. Anthropic's "input length and `max_tokens`");
 *   `promptTokens` the prompt alone when the provider's wording separates it (the caller re-plans with
 *   the observed ratio promptTokens ÷ planned). Never a 429: OpenAI's "Request too large … on
 *   tokens per min" names a per-minute rate limit, not a window, and is `fatal` 429.
 * - `retryable`: 429, 408, 5xx (and Anthropic's 529), a dropped connection or a stream that ended early.
 *   `retryAfterMs` comes from the `retry-after-ms` / `retry-after` headers when present.
 * - `fatal`: content filter, billing, auth and any other 4xx. `message` is already sanitised.
 * - `timeout`: the caller's signal fired (cancellation or deadline).
 * - `unknown`: anything else (a bug, an unexpected shape). `message` is sanitised.
 * - `refused`: our egress policy refused the connection (the endpoint or a redirect target is, or
 *   resolves to, an internal address); `message` names the setting (`llm.baseUrl: …`). Never retried.
 *
 * Every `message` is sanitised (no keys, no credentialed URLs) and safe for `details`.
 */
export type UpstreamFailure =
  | { kind: 'overflow'; limit?: number; actual?: number; promptTokens?: number; message: string }
  | { kind: 'retryable'; status: number; retryAfterMs?: number; message: string }
  | { kind: 'fatal'; status: number; message: string }
  | { kind: 'timeout' }
  | { kind: 'unknown'; message: string }
  | { kind: 'refused'; message: string };

/** A header lookup that works for fetch `Headers`, Node's `IncomingHttpHeaders` and plain records. */
export type HeaderBag = Headers | Record<string, string | string[] | undefined>;

/**
 * A non-2xx HTTP answer from a provider that the adapter called with plain `fetch` (Vertex, Ollama):
 * the status, the headers and the raw body text, unparsed. `message` never holds the body.
 */
export class UpstreamHttpError extends Error {
  override readonly name = 'UpstreamHttpError';

  constructor(
    readonly provider: ProviderId,
    readonly status: number,
    readonly body: string,
    readonly headers: HeaderBag,
  ) {
    super(`${provider} answered HTTP ${status}`);
  }
}

/** Why a stream that answered 200 still failed. */
export type StreamFailureReason =
  /** The stream ended without the provider's final event (`[DONE]`, `message_stop`, `done: true`…). */
  | 'incomplete'
  /** The provider stopped the answer for content (OpenAI `content_filter`, Bedrock `guardrail_intervened`…). */
  | 'content_filter'
  /** The provider sent an error event inside the stream (`event: error`, `{"error": …}` line). */
  | 'error_event'
  /** The provider's bytes did not parse (broken frame, bad JSON, CRC mismatch). */
  | 'protocol';

/**
 * A failure discovered while reading a 200 stream. `body` holds the provider's error payload for
 * `error_event` (raw text, classified like an HTTP body), `status` the status that payload implies.
 */
export class UpstreamStreamError extends Error {
  override readonly name = 'UpstreamStreamError';

  constructor(
    readonly provider: ProviderId,
    readonly reason: StreamFailureReason,
    message: string,
    readonly body?: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * An embedding answer that does not match the project's settings: a vector of the wrong length, or a
 * different number of vectors than texts sent. Classified `fatal` (502): storing it would mix vectors.
 */
export class EmbeddingShapeError extends Error {
  override readonly name = 'EmbeddingShapeError';

  constructor(
    readonly provider: string,
    readonly expected: { vectors: number; dimensions: number },
    readonly received: { vectors: number; dimensions: number },
  ) {
    super(
      `${provider} returned ${received.vectors} vector(s) of ${received.dimensions} dimensions; ` +
        `expected ${expected.vectors} of ${expected.dimensions} (the project's embedding dimensions)`,
    );
  }
}

/**
 * What `streamWithRetry` throws: the classified failure, how many attempts were made, and whether
 * text had already been streamed to the caller (then nothing was retried and the partial answer must
 * not be stored as finished).
 */
export class UpstreamFailureError extends Error {
  override readonly name = 'UpstreamFailureError';

  constructor(
    readonly failure: UpstreamFailure,
    readonly provider: ProviderId,
    readonly attempts: number,
    readonly streamed: boolean,
  ) {
    super(`${provider} call failed (${failure.kind}) after ${attempts} attempt(s)`);
  }
}

/** The error an adapter throws when the caller's signal fires while it is reading a stream. */
export function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof Error) return reason;
  const error = new Error('The operation was aborted');
  error.name = 'AbortError';
  return error;
}

/** Throws `abortError(signal)` when the signal has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw abortError(signal);
}
