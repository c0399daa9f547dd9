import { classifyUpstreamError } from './errors/classify-upstream-error';
import { abortError, type UpstreamFailure, UpstreamFailureError } from './errors/upstream-errors';
import type { ChatChunk, ChatProvider, ChatRequest } from './types';

/** What `onRetry` is told before each wait. */
export interface RetryNotice {
  /** The attempt that failed, from 1. */
  attempt: number;
  /** The wait before the next attempt, in milliseconds. */
  delayMs: number;
  failure: Extract<UpstreamFailure, { kind: 'retryable' }>;
}

/** Options of `streamWithRetry`. Times are milliseconds. */
export interface StreamRetryOptions {
  /** Attempts in all, including the first; default 3. */
  maxAttempts?: number;
  /** First backoff step; doubles per attempt (500, 1000, 2000…), halved-to-full jitter; default 500. */
  baseDelayMs?: number;
  /** Longest backoff step; default 8000. */
  maxDelayMs?: number;
  /**
   * Longest `retry-after` honoured; a provider asking for more is not retried (the call fails at once
   * with the 502 rather than holding the ask open); default 20000.
   */
  maxRetryAfterMs?: number;
  /** Cancels waits and attempts; defaults to `request.signal`. */
  signal?: AbortSignal;
  /** Called before each wait (log it, count it; never log the request). */
  onRetry?: (notice: RetryNotice) => void;
  /** Random source in [0, 1) for jitter; injectable for tests. */
  random?: () => number;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The wait before attempt `attempt + 1`, in milliseconds: the provider's `retry-after` when it sent
 * one, else exponential backoff `baseDelayMs · 2^(attempt-1)` capped at `maxDelayMs`, with jitter
 * between half and all of it (so a burst of workers does not retry in lockstep).
 */
export function retryDelayMs(
  attempt: number,
  failure: { retryAfterMs?: number },
  options: Pick<StreamRetryOptions, 'baseDelayMs' | 'maxDelayMs' | 'random'> = {},
): number {
  if (failure.retryAfterMs !== undefined) return failure.retryAfterMs;
  const step = Math.min(options.maxDelayMs ?? 8000, (options.baseDelayMs ?? 500) * 2 ** (attempt - 1));
  const random = options.random ?? Math.random;
  return Math.round(step / 2 + (step / 2) * random());
}

/**
 * Streams a chat answer, retrying a `retryable` failure (429, 5xx, dropped connection) with backoff
 * that honours `retry-after`, but ONLY before the first delta has been yielded.
 *
 * - Overflow is never retried here: it is thrown at once so the caller can re-budget below
 *   `failure.limit` and call again (once); a second overflow becomes 413 `context_overflow`.
 * - Once text has streamed, any failure is thrown as `UpstreamFailureError` with `streamed: true`;
 *   there is no silent restart. A caller that restarts must first emit its `reset` event.
 * - Fatal, timeout and unknown failures are thrown at once.
 *
 * @yields the provider's chunks unchanged (`delta`s, then one `usage`).
 * @throws UpstreamFailureError carrying the classified failure, the attempts made, and `streamed`.
 *   Map it with `toAskError(error.failure)`.
 */
export async function* streamWithRetry(
  provider: ChatProvider,
  request: ChatRequest,
  options: StreamRetryOptions = {},
): AsyncGenerator<ChatChunk, void, undefined> {
  const maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  const signal = options.signal ?? request.signal;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 20000;
  let streamed = false;
  for (let attempt = 1; ; attempt++) {
    try {
      for await (const chunk of provider.streamChat({ ...request, signal })) {
        if (chunk.type === 'delta' && chunk.text.length > 0) streamed = true;
        yield chunk;
      }
      return;
    } catch (err) {
      const failure = signal?.aborted ? ({ kind: 'timeout' } as const) : classifyUpstreamError(err, provider.provider);
      const retry =
        failure.kind === 'retryable' &&
        !streamed &&
        attempt < maxAttempts &&
        (failure.retryAfterMs === undefined || failure.retryAfterMs <= maxRetryAfterMs);
      if (!retry) throw new UpstreamFailureError(failure, provider.provider, attempt, streamed);
      const delayMs = retryDelayMs(attempt, failure, options);
      options.onRetry?.({ attempt, delayMs, failure });
      try {
        await sleep(delayMs, signal);
      } catch {
        throw new UpstreamFailureError({ kind: 'timeout' }, provider.provider, attempt, streamed);
      }
    }
  }
}

/**
 * Counts a request at the provider's count endpoint (Anthropic `count_tokens`, Vertex `:countTokens`),
 * classified and retried exactly like a chat call: a `retryable` failure (429, 5xx, dropped connection)
 * is retried with the same backoff and `retry-after` bound as {@link streamWithRetry}, up to
 * `maxAttempts` in all; any other failure is thrown at once.
 *
 * @returns the provider's count of the request's input tokens.
 * @throws Error when the provider has no count endpoint (check `provider.countRequestTokens` first).
 * @throws UpstreamFailureError with the classified failure (`overflow` → the caller's 413 path,
 *   `retryable` after the last attempt → 502, `timeout` → 504; map with `toAskError`).
 */
export async function countWithRetry(
  provider: ChatProvider,
  request: ChatRequest,
  options: StreamRetryOptions = {},
): Promise<number> {
  const count = provider.countRequestTokens?.bind(provider);
  if (!count) throw new Error(`${provider.provider}: no count endpoint`);
  const maxAttempts = Math.max(1, options.maxAttempts ?? 3);
  const signal = options.signal ?? request.signal;
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 20000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await count({ ...request, signal });
    } catch (err) {
      const failure = signal?.aborted ? ({ kind: 'timeout' } as const) : classifyUpstreamError(err, provider.provider);
      const retry =
        failure.kind === 'retryable' &&
        attempt < maxAttempts &&
        (failure.retryAfterMs === undefined || failure.retryAfterMs <= maxRetryAfterMs);
      if (!retry) throw new UpstreamFailureError(failure, provider.provider, attempt, false);
      const delayMs = retryDelayMs(attempt, failure, options);
      options.onRetry?.({ attempt, delayMs, failure });
      try {
        await sleep(delayMs, signal);
      } catch {
        throw new UpstreamFailureError({ kind: 'timeout' }, provider.provider, attempt, false);
      }
    }
  }
}
