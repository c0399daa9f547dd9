import {
  type AskError,
  embeddingAuthFailed,
  embeddingDimensionsMismatch,
  embeddingUpstream,
  forbidden,
  isAskError,
  rateLimited,
} from '@ask/ask-errors';
import type { ProviderId } from '@ask/model-catalog';
import type { EmbeddingProviderId } from '../types';
import { classifyUpstreamError } from './classify-upstream-error';
import { EmbeddingShapeError } from './upstream-errors';

/** How an embedding call failed, for ingestion (retry or not, stop the run or fail one document) and for asks. */
export interface EmbeddingFailure {
  /** The typed error a client sees. */
  error: AskError;
  /**
   * `run`: every later call would fail the same way (credentials, rate limit, wrong vector length,
   * timeout, an outage): stop. `document`: this input was refused (too long, rejected as invalid):
   * fail the documents of the call and go on with the others.
   */
  scope: 'run' | 'document';
  /** A later identical call may succeed (429, 5xx, dropped connection). */
  retryable: boolean;
  /** The provider's `Retry-After`, in milliseconds, when it sent one. */
  retryAfterMs?: number;
}

/** Retry-After hint (seconds) of a provider 429 that sent none. */
const DEFAULT_RETRY_AFTER_S = 30;

/**
 * Maps any error an embedding call threw to the typed error of libs/ask-errors, with
 * `classifyUpstreamError` deciding the kind:
 *
 * | failure | AskError | scope |
 * | --- | --- | --- |
 * | an `AskError` already (a missing setting: 412) | itself | run |
 * | `EmbeddingShapeError` (a vector of another length, or another count) | 502 `embedding_dimensions_mismatch` naming both lengths | run |
 * | 401, 403 | 502 `embedding_auth_failed`, `details: status=401 …` | run |
 * | 429 (retries exhausted) | 429 `rate_limited`, `details: retry_after=N` (the provider's Retry-After, else 30 s) | run |
 * | 408, 409, 5xx, dropped connection (retries exhausted) | 502 `embedding_upstream` | run |
 * | cancelled or timed out | 504 `embedding_upstream` | run |
 * | context overflow, any other 4xx | 502 `embedding_upstream`, `details: status=400 …` | document |
 * | refused by the egress policy (an internal endpoint, a redirect to one) | 403 `forbidden` naming `embedding.baseUrl` | run |
 * | anything else | 502 `embedding_upstream` | run |
 *
 * `details` are sanitised (no key, no credentialed URL). Never throws.
 */
export function classifyEmbeddingFailure(err: unknown, provider: ProviderId | EmbeddingProviderId): EmbeddingFailure {
  if (isAskError(err)) return { error: err, scope: 'run', retryable: false };
  if (err instanceof EmbeddingShapeError) {
    return {
      error: embeddingDimensionsMismatch(provider, err.expected, err.received, err),
      scope: 'run',
      retryable: false,
    };
  }
  // The table is provider-agnostic; the id only names the source in messages.
  const failure = classifyUpstreamError(err, provider as ProviderId);
  switch (failure.kind) {
    case 'timeout':
      return {
        error: embeddingUpstream(`provider=${provider} the call was cancelled or its deadline passed`, {
          timeout: true,
          cause: err,
        }),
        scope: 'run',
        retryable: false,
      };
    case 'overflow':
      return {
        error: embeddingUpstream(
          `provider=${provider} status=400 input too long for the embedding model: ${failure.message}`,
          { cause: err },
        ),
        scope: 'document',
        retryable: false,
      };
    case 'retryable': {
      const retryAfter = failure.retryAfterMs;
      if (failure.status === 429) {
        const seconds = retryAfter !== undefined ? Math.max(1, Math.ceil(retryAfter / 1000)) : DEFAULT_RETRY_AFTER_S;
        return {
          error: rateLimited(seconds),
          scope: 'run',
          retryable: true,
          ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
        };
      }
      return {
        error: embeddingUpstream(`provider=${provider} status=${failure.status} ${failure.message}`, { cause: err }),
        scope: 'run',
        retryable: true,
        ...(retryAfter !== undefined ? { retryAfterMs: retryAfter } : {}),
      };
    }
    case 'fatal':
      if (failure.status === 401 || failure.status === 403) {
        return {
          error: embeddingAuthFailed(`provider=${provider} status=${failure.status} ${failure.message}`, err),
          scope: 'run',
          retryable: false,
        };
      }
      if (failure.status === 402) {
        return {
          error: embeddingUpstream(`provider=${provider} status=402 ${failure.message}`, { cause: err }),
          scope: 'run',
          retryable: false,
        };
      }
      return {
        error: embeddingUpstream(`provider=${provider} status=${failure.status} ${failure.message}`, { cause: err }),
        scope: failure.status >= 400 && failure.status < 500 ? 'document' : 'run',
        retryable: false,
      };
    case 'unknown':
      return {
        error: embeddingUpstream(`provider=${provider} ${failure.message}`, { cause: err }),
        scope: 'run',
        retryable: false,
      };
    case 'refused':
      return { error: forbidden(failure.message), scope: 'run', retryable: false };
  }
}
