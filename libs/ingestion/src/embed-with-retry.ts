import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  checkEmbeddings,
  classifyEmbeddingFailure,
  type EmbeddingFailure,
  type EmbeddingProvider,
} from '@ask/llm-providers';
import { type EmbeddingCallLedger, type EmbeddingCallScope, isCallNotRecorded } from './ports';

/** Retry policy of embedding calls during ingestion. */
export interface EmbedRetryOptions {
  /** Retries of a retryable failure (429, 5xx, dropped connection) per call; default 3. */
  providerRetries?: number;
  /** Longest wait before one retry, ms; default 30,000. The provider's Retry-After is honoured up to it. */
  maxRetryWaitMs?: number;
  signal?: AbortSignal;
  /** Records every call (each attempt) in `provider_calls` for this scope; unset: not recorded. */
  calls?: { ledger: EmbeddingCallLedger; scope: EmbeddingCallScope };
}

/** Thrown by {@link embedWithRetry}: the classified failure (its typed error, scope, retryability). */
export class EmbeddingCallError extends Error {
  override readonly name = 'EmbeddingCallError';
  constructor(readonly failure: EmbeddingFailure) {
    super(failure.error.message, { cause: failure.error });
  }
}

/** First backoff between retries when the provider sent no Retry-After, ms (doubled each retry). */
const FIRST_BACKOFF_MS = 500;

/**
 * Embeds `texts` with `provider`, checking one vector of `provider.dimensions` numbers per text, and
 * retrying retryable failures (`classifyEmbeddingFailure`: 429, 5xx, dropped connections) up to
 * `providerRetries` times, waiting the provider's Retry-After (capped at `maxRetryWaitMs`) or
 * 0.5 s, 1 s, 2 s….
 * @returns the vectors, in the order of `texts`.
 * @throws EmbeddingCallError with the classified failure once retries are spent or for any other
 *   failure (a vector of the wrong length included); the signal's reason when aborted.
 */
export async function embedWithRetry(
  provider: EmbeddingProvider,
  texts: string[],
  options: EmbedRetryOptions = {},
): Promise<number[][]> {
  const retries = options.providerRetries ?? 3;
  const maxWait = options.maxRetryWaitMs ?? 30_000;
  for (let attempt = 0; ; attempt++) {
    options.signal?.throwIfAborted();
    try {
      const vectors = options.calls
        ? await options.calls.ledger.embed(provider, texts, options.calls.scope, { signal: options.signal })
        : await provider.embed(texts, options.signal);
      return checkEmbeddings(`${provider.provider}/${provider.model}`, texts.length, provider.dimensions, vectors);
    } catch (err) {
      if (options.signal?.aborted) throw err;
      // The ledger could not record the call, so none was made: an infrastructure failure, not the provider's.
      if (isCallNotRecorded(err)) throw err;
      const failure = classifyEmbeddingFailure(err, provider.provider);
      if (!failure.retryable || attempt >= retries) throw new EmbeddingCallError(failure);
      const wait = Math.min(maxWait, failure.retryAfterMs ?? FIRST_BACKOFF_MS * 2 ** attempt);
      await sleep(wait, undefined, { signal: options.signal });
    }
  }
}

/** SHA-256 (hex) of a JSON value: the content hashes of documents and items. */
export function contentHash(value: object): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex');
}

/** Version of the chunking and hashing rules; bump to force a re-ingestion of everything. */
export const INGESTION_VERSION = 1;
