import {
  type AskError,
  contextOverflow,
  type ContextOverflowFigures,
  forbidden,
  llmSynthesisFailed,
  llmUpstream,
} from '@ask/ask-errors';
import type { UpstreamFailure } from './upstream-errors';

/** What the caller knows beside the failure, for the error's `details`. */
export interface ToAskErrorContext {
  /** The model id as the project names it (used for an overflow without `overflow` figures). */
  model?: string;
  /** The budget's figures when the re-budgeted retry overflowed again (seed 000's 413 details). */
  overflow?: ContextOverflowFigures;
  /** The underlying error, kept as `cause` for logs (never serialised into a body). */
  cause?: unknown;
}

/**
 * Maps a classified provider failure to the typed error the API returns (seed 000 "Typed errors"):
 *
 * | failure | AskError |
 * | --- | --- |
 * | overflow | 413 `context_overflow`: call this only AFTER the re-budgeted retry overflowed again |
 * | retryable (retries exhausted), fatal | 502 `llm_upstream`, the sanitised provider message in `details` |
 * | timeout | 504 `llm_upstream` |
 * | unknown | 500 `llm_synthesis_failed`, the sanitised message in `details` |
 * | refused | 403 `forbidden`, `details` naming the setting (`llm.baseUrl: …`) |
 *
 * The overflow's `details` is the seed's `model=… window=… question=… rag=… knowledge=…` form from
 * `context.overflow`; without it, the window is the limit the provider disclosed (0 when none).
 */
export function toAskError(failure: UpstreamFailure, context: ToAskErrorContext = {}): AskError {
  switch (failure.kind) {
    case 'overflow':
      return contextOverflow(
        context.overflow ?? {
          model: context.model ?? 'unknown',
          window: failure.limit ?? 0,
          question: 0,
          rag: 0,
          knowledge: 0,
        },
      );
    case 'retryable':
      return llmUpstream(`status=${failure.status} ${failure.message}`, { cause: context.cause });
    case 'fatal':
      return llmUpstream(`status=${failure.status} ${failure.message}`, { cause: context.cause });
    case 'timeout':
      return llmUpstream('the provider call was cancelled or its deadline passed', {
        timeout: true,
        cause: context.cause,
      });
    case 'unknown':
      return llmSynthesisFailed(failure.message, context.cause);
    case 'refused':
      return forbidden(failure.message);
  }
}
