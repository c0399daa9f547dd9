import { Logger } from '@nestjs/common';
import { classifyEmbeddingFailure, type EmbeddingProvider, type EmbeddingUsage } from '@ask/llm-providers';
import { findPrice, modelMetricLabel, type PriceOverride, type ProviderId } from '@ask/model-catalog';
import { callCostUsd, InconsistentUsageError, type NormalizedUsage, normalizeUsage } from '@ask/usage-accounting';
import {
  fail,
  genAiOperationDuration,
  genAiTokenUsage,
  refuseUsage,
  type Span,
  SpanKind,
  startSpan,
} from '@ask/observability';
import type { CallRecorder, ProviderCallRecord } from './repositories/provider-calls.repository';

/** Who an embedding call is for: the project, and the ask and session when it embeds a question. */
export interface EmbeddingCallScope {
  projectId: string;
  sessionId?: string | null;
  askId?: string | null;
}

/** How {@link EmbeddingLedger.embed} runs a call. */
export interface EmbedCallOptions {
  signal?: AbortSignal;
  /**
   * Where the write of the call's row goes when the caller awaits it later (off the ask's path);
   * without it the row is written before `embed` returns or throws. A write never rejects.
   */
  writes?: Array<Promise<void>>;
}

/**
 * The call's in-flight row could not be written (the database saturated or away, after retries), so
 * the call was not made: an infrastructure failure to retry, never a provider's error.
 */
export class CallNotRecordedError extends Error {
  constructor(cause: unknown) {
    super(`the provider call was not made: its ledger row could not be written (${(cause as Error)?.message})`, {
      cause,
    });
    this.name = 'CallNotRecordedError';
  }
}

/** The usage columns of a row, from what the adapter reported. */
interface UsageColumns {
  usage: NormalizedUsage | null;
  usageError: string | null;
}

/**
 * The usage of one embedding call in the GenAI convention: the reported object normalised by its
 * convention (OpenAI `{ prompt_tokens, total_tokens }`, Ollama `prompt_eval_count`, local
 * `{ promptTokens }`), else the adapter's summed `inputTokens` (Bedrock Titan, Vertex); output 0.
 * An inconsistent object (a negative count, `total_tokens` ≠ `prompt_tokens`) is refused, never clamped.
 */
export function embeddingUsageColumns(
  reported: EmbeddingUsage | undefined,
  provider: string,
  logger: Pick<Logger, 'error'>,
): UsageColumns {
  if (!reported) return { usage: null, usageError: null };
  try {
    if (reported.convention) {
      const usage = normalizeUsage(reported.convention, reported.raw);
      if (usage) return { usage, usageError: null };
    }
    if (reported.inputTokens === null) return { usage: null, usageError: null };
    if (!Number.isInteger(reported.inputTokens) || reported.inputTokens < 0)
      throw new InconsistentUsageError(
        reported.convention ?? 'local',
        `input tokens ${reported.inputTokens} is not a non-negative integer`,
        reported.raw,
      );
    return {
      usage: { input: reported.inputTokens, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 },
      usageError: null,
    };
  } catch (err) {
    return refuseUsage(err, provider, logger, 'embedding usage');
  }
}

/**
 * Measures and records every upstream embedding call: one `provider_calls` row per
 * call (`operation` `embeddings`, `purpose` `embed`) with the provider, the requested and answering
 * model, the raw usage object and its input tokens, the duration, and the typed error code of a
 * failed call; costed from the price table where the model has a price (OpenAI's
 * text-embedding-3 / ada-002; self-hosted 0). Each call is also a span `embeddings <model>` with the
 * GenAI attributes (when tracing is on) and observes the GenAI metrics. Write-ahead (a call is paid once): the
 * row is written `in_flight` before the request is sent and completed after, so a process that dies
 * mid-call still leaves the paid call in the ledger; when that first write fails (after retries) the
 * call is not made ({@link CallNotRecordedError}). A failed completion is logged, never thrown:
 * accounting must not fail a retrieval or an ingestion whose call was made.
 */
export class EmbeddingLedger {
  private readonly logger = new Logger(EmbeddingLedger.name);

  constructor(
    private readonly calls: CallRecorder,
    private readonly overrides: readonly PriceOverride[] = [],
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * One `provider.embed(texts)` call, measured and recorded.
   * @returns the vectors as the provider returned them (unchecked).
   * @throws whatever `provider.embed` threw, once its row (with the typed code of
   *   `classifyEmbeddingFailure`) is written or queued in `options.writes`; CallNotRecordedError,
   *   before any request, when the call's row could not be written.
   */
  async embed(
    provider: EmbeddingProvider,
    texts: string[],
    scope: EmbeddingCallScope,
    options: EmbedCallOptions = {},
  ): Promise<number[][]> {
    const started = this.now();
    let row: string;
    try {
      row = await this.calls.open({
        projectId: scope.projectId,
        sessionId: scope.sessionId ?? null,
        askId: scope.askId ?? null,
        operation: 'embeddings',
        purpose: 'embed',
        provider: provider.provider,
        requestedModel: provider.model,
        startedAt: new Date(started),
      });
    } catch (err) {
      throw new CallNotRecordedError(err);
    }
    const span = startSpan(`embeddings ${provider.model}`, () => ({
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'embeddings',
        'gen_ai.provider.name': provider.provider,
        'gen_ai.system': provider.provider,
        'gen_ai.request.model': provider.model,
        'gen_ai.embeddings.dimension.count': provider.dimensions,
        'ask.embedding.inputs': texts.length,
      },
    }));
    let reported: EmbeddingUsage | undefined;
    let errorCode: string | null = null;
    try {
      return await provider.embed(texts, options.signal, (usage) => (reported = usage));
    } catch (err) {
      errorCode = classifyEmbeddingFailure(err, provider.provider).error.code;
      throw err;
    } finally {
      const write = this.write(row, provider, scope, started, reported, errorCode, span);
      if (options.writes) options.writes.push(write);
      else await write;
    }
  }

  private async write(
    row: string,
    provider: EmbeddingProvider,
    scope: EmbeddingCallScope,
    started: number,
    reported: EmbeddingUsage | undefined,
    errorCode: string | null,
    span: Span | undefined,
  ): Promise<void> {
    const durationMs = Math.max(0, this.now() - started);
    const { usage, usageError } = embeddingUsageColumns(reported, provider.provider, this.logger);
    // The embedded embedders are priced like the embedded stand-in LLM (self-hosted, 0).
    const priceProvider: ProviderId = provider.provider === 'local-semantic' ? 'local' : provider.provider;
    const price = usage ? findPrice({ provider: priceProvider, model: provider.model }, this.overrides) : undefined;
    const labels = {
      gen_ai_operation_name: 'embeddings',
      gen_ai_provider_name: provider.provider,
      // The catalog family or `other`: the model id is the tenant's, unbounded (a label per id would grow the metric without bound).
      gen_ai_request_model: modelMetricLabel(provider),
    };
    genAiOperationDuration.observe({ ...labels, error_type: errorCode ?? '' }, durationMs / 1000);
    if (usage) genAiTokenUsage.observe({ ...labels, gen_ai_token_type: 'input' }, usage.input);
    if (span) {
      if (reported?.model) span.setAttribute('gen_ai.response.model', reported.model);
      if (usage) span.setAttribute('gen_ai.usage.input_tokens', usage.input);
      if (errorCode) fail(span, undefined, errorCode);
      span.end();
    }
    const record: ProviderCallRecord = {
      projectId: scope.projectId,
      sessionId: scope.sessionId ?? null,
      askId: scope.askId ?? null,
      operation: 'embeddings',
      purpose: 'embed',
      provider: provider.provider,
      requestedModel: provider.model,
      answeringModel: reported?.model ?? null,
      rawUsage: reported?.raw,
      usageError,
      inputTokens: usage?.input ?? null,
      cacheReadTokens: usage ? 0 : null,
      cacheWriteTokens: usage ? 0 : null,
      outputTokens: usage ? 0 : null,
      reasoningTokens: usage ? 0 : null,
      durationMs,
      errorCode,
      costUsd: usage && price ? callCostUsd(usage, price) : null,
      priceFamily: usage && price ? price.family : null,
      startedAt: new Date(started),
    };
    try {
      await this.calls.close(row, record);
    } catch (err) {
      this.logger.error(
        `project ${scope.projectId}: an embedding call could not be recorded: ${(err as Error).message}`,
      );
    }
  }
}
