import { Logger } from '@nestjs/common';
import type { UsageChunk } from '@ask/llm-providers';
import { findPrice, modelMetricLabel, type PriceOverride, type ProviderId } from '@ask/model-catalog';
import {
  fail,
  genAiOperationDuration,
  genAiTimeToFirstChunk,
  genAiTokenUsage,
  type Span,
  SpanKind,
  startSpan,
  refuseUsage,
} from '@ask/observability';
import type { CallRecorder, ProviderCallPurpose, ProviderCallRecord } from '@ask/persistence';
import { callCostUsd, type NormalizedUsage, normalizeUsage } from '@ask/usage-accounting';

/** Who a call is for: the ask, its session and project, and why it is made. */
export interface CallScope {
  projectId: string;
  sessionId: string;
  askId: string;
  purpose: ProviderCallPurpose;
}

/** One call being measured; {@link CallLedger.start} makes it, {@link CallMeter.finish} records it once. */
export interface CallMeter {
  /** Marks the first streamed chunk (only the first mark counts). */
  firstChunk(): void;
  /** Keeps the stream's usage chunk. */
  usage(chunk: UsageChunk): void;
  /**
   * Ends the current attempt as failed with `errorCode` (a retry notice: 429, 5xx, a dropped
   * connection before the first chunk) and starts the next one after `delayMs` of backoff.
   */
  retried(errorCode: string, delayMs: number): void;
  /**
   * Records the call: a typed error code when it failed (null when it answered), and a finish reason
   * of ours when the provider gave none (`aborted` for a run that had to stop). Never throws.
   */
  finish(errorCode?: string | null, finishReason?: string): Promise<void>;
}

/** What {@link CallLedger.start} is told about a call. */
export type CallSpec = CallScope & {
  operation: ProviderCallRecord['operation'];
  provider: ProviderId;
  requestedModel: string;
  plannedTokens?: number;
};

/** One attempt being measured (times in ms since the epoch), and its span while tracing is on. */
interface Attempt {
  /** The attempt's in-flight row (`ProviderCallsRepository.open`); rejected when it could not be written. */
  row: Promise<string>;
  started: number;
  first?: number;
  chunk?: UsageChunk;
  span?: Span;
}

/**
 * The provider span of one attempt, `<operation> <model>` (the GenAI span name), a client span child
 * of the active span; undefined while tracing is off. Its GenAI attributes are completed by
 * {@link endCallSpan}.
 */
function startCallSpan(call: CallSpec): Span | undefined {
  return startSpan(`${call.operation} ${call.requestedModel}`, () => ({
    kind: SpanKind.CLIENT,
    attributes: {
      'gen_ai.operation.name': call.operation,
      'gen_ai.provider.name': call.provider,
      'gen_ai.system': call.provider,
      'gen_ai.request.model': call.requestedModel,
      'ask.call.purpose': call.purpose,
      ...(call.plannedTokens !== undefined ? { 'ask.planned_tokens': call.plannedTokens } : {}),
    },
  }));
}

/**
 * Ends an attempt's span with what the provider reported (OpenTelemetry GenAI semantic conventions:
 * `gen_ai.response.model`, `gen_ai.response.finish_reasons`, `gen_ai.usage.input_tokens` including
 * cached, `gen_ai.usage.output_tokens` including reasoning, and their cache and reasoning subsets),
 * or the typed error code as `error.type`. No prompt or answer text is ever an attribute.
 */
function endCallSpan(
  span: Span,
  chunk: UsageChunk | undefined,
  usage: NormalizedUsage | null,
  errorCode: string | null,
  finishReason: string | null,
): void {
  if (chunk?.model) span.setAttribute('gen_ai.response.model', chunk.model);
  if (finishReason) span.setAttribute('gen_ai.response.finish_reasons', [finishReason]);
  if (usage) {
    span.setAttributes({
      'gen_ai.usage.input_tokens': usage.input,
      'gen_ai.usage.output_tokens': usage.output,
      'gen_ai.usage.cache_read.input_tokens': usage.cacheRead,
      'gen_ai.usage.cache_creation.input_tokens': usage.cacheWrite,
      'gen_ai.usage.reasoning.output_tokens': usage.reasoning,
    });
  }
  if (errorCode) fail(span, undefined, errorCode);
  span.end();
}

/** How the row's usage columns are filled from a usage chunk. */
export interface NormalizedCall {
  usage: NormalizedUsage | null;
  usageError: string | null;
}

/**
 * Normalizes a usage chunk's raw object with its convention. A negative or inconsistent object is
 * logged at error level with the raw object as the provider sent it, and kept unnormalized (no
 * bucket is clamped or guessed).
 */
export function normalizeChunk(
  chunk: UsageChunk | undefined,
  provider: string,
  logger: Pick<Logger, 'error'>,
): NormalizedCall {
  if (!chunk?.convention) return { usage: null, usageError: null };
  try {
    return { usage: normalizeUsage(chunk.convention, chunk.raw), usageError: null };
  } catch (err) {
    return refuseUsage(err, provider, logger);
  }
}

/**
 * Measures and records every upstream call of the synthesis worker in `provider_calls`, costs it at
 * the price in force (built-in table, operator overrides), and observes the GenAI metrics.
 * Write-ahead: each attempt's row is written before its request is sent ({@link start} awaits it,
 * and throws when it cannot be written, so no call is made unrecorded) and completed when the
 * attempt ends; a process that dies mid-call leaves its row `in_flight` (paid, usage unknown).
 * Writes are retried while the pool is saturated; a completion that still fails is logged, never
 * thrown: accounting must not fail an answer already paid for.
 */
export class CallLedger {
  private readonly logger = new Logger(CallLedger.name);

  constructor(
    private readonly calls: CallRecorder,
    private readonly overrides: readonly PriceOverride[] = [],
    private readonly now: () => number = Date.now,
  ) {}

  /** Count endpoints are free (Anthropic `count_tokens`, Vertex `countTokens`); other calls cost their usage at the price. */
  private cost(
    operation: ProviderCallRecord['operation'],
    usage: NormalizedUsage | null,
    price: ReturnType<typeof findPrice>,
  ): Pick<ProviderCallRecord, 'costUsd' | 'priceFamily'> {
    if (operation === 'count_tokens') return { costUsd: '0.000000000000', priceFamily: 'count endpoint (free)' };
    if (!usage || !price) return { costUsd: null, priceFamily: null };
    return { costUsd: callCostUsd(usage, price), priceFamily: price.family };
  }

  /**
   * Starts measuring one call (and the attempts `streamWithRetry` / `countWithRetry` make of it:
   * each failed attempt is its own row, see {@link CallMeter.retried}), once the first attempt's
   * in-flight row is written.
   * @param call the scope, the provider and requested model, and our planned prompt tokens.
   * @throws the database's error when the row could not be written (after retries): make no call.
   */
  async start(call: CallSpec): Promise<CallMeter> {
    const started = this.now();
    const row = this.open(call, started);
    await row;
    let attempt: Attempt = { row, started, span: startCallSpan(call) };
    const pending: Array<Promise<void>> = [];
    let done = false;
    return {
      firstChunk: () => {
        attempt.first ??= this.now();
      },
      usage: (c) => {
        attempt.chunk = c;
      },
      retried: (errorCode, delayMs) => {
        const failed = attempt;
        const ended = this.now();
        // The next attempt starts once the backoff is over; its row is written during the backoff.
        const next = ended + Math.max(0, delayMs);
        const row = this.open(call, next);
        row.catch(() => undefined);
        attempt = { row, started: next, span: startCallSpan(call) };
        pending.push(this.write(call, failed, ended, errorCode));
      },
      finish: async (errorCode = null, ownFinishReason) => {
        if (done) return;
        done = true;
        pending.push(this.write(call, attempt, this.now(), errorCode, ownFinishReason));
        await Promise.all(pending);
      },
    };
  }

  /** Writes an attempt's in-flight row (retried while the pool is saturated). */
  private open(call: CallSpec, started: number): Promise<string> {
    return this.calls.open({
      projectId: call.projectId,
      sessionId: call.sessionId,
      askId: call.askId,
      operation: call.operation,
      purpose: call.purpose,
      provider: call.provider,
      requestedModel: call.requestedModel,
      plannedTokens: call.plannedTokens ?? null,
      startedAt: new Date(started),
    });
  }

  /**
   * Observes the metrics of one attempt and completes its row (or, when its in-flight row could not
   * be written, stores the whole row); a failed write is logged, never thrown.
   */
  private async write(
    call: CallSpec,
    attempt: Attempt,
    ended: number,
    errorCode: string | null,
    ownFinishReason?: string,
  ): Promise<void> {
    const { row, started, first, chunk, span } = attempt;
    const { usage, usageError } = normalizeChunk(chunk, call.provider, this.logger);
    if (span) endCallSpan(span, chunk, usage, errorCode, chunk?.finishReason ?? ownFinishReason ?? null);
    const price = usage
      ? findPrice({ provider: call.provider, model: call.requestedModel }, this.overrides)
      : undefined;
    const labels = {
      gen_ai_operation_name: call.operation,
      gen_ai_provider_name: call.provider,
      // The catalog family or `other`: the model id is the tenant's, unbounded (a label per id would grow the metric without bound).
      gen_ai_request_model: modelMetricLabel({ provider: call.provider, model: call.requestedModel }),
    };
    genAiOperationDuration.observe({ ...labels, error_type: errorCode ?? '' }, Math.max(0, ended - started) / 1000);
    if (first !== undefined) genAiTimeToFirstChunk.observe(labels, (first - started) / 1000);
    if (usage) {
      const types: Array<[string, number]> = [
        ['input', usage.input],
        ['output', usage.output],
        ['cache_read', usage.cacheRead],
        ['cache_creation', usage.cacheWrite],
        ['reasoning', usage.reasoning],
      ];
      for (const [type, tokens] of types) genAiTokenUsage.observe({ ...labels, gen_ai_token_type: type }, tokens);
    }
    try {
      const record: ProviderCallRecord = {
        projectId: call.projectId,
        sessionId: call.sessionId,
        askId: call.askId,
        operation: call.operation,
        purpose: call.purpose,
        provider: call.provider,
        requestedModel: call.requestedModel,
        answeringModel: chunk?.model ?? null,
        rawUsage: chunk?.raw,
        usageError,
        inputTokens: usage?.input ?? null,
        cacheReadTokens: usage?.cacheRead ?? null,
        cacheWriteTokens: usage?.cacheWrite ?? null,
        outputTokens: usage?.output ?? null,
        reasoningTokens: usage?.reasoning ?? null,
        plannedTokens: call.plannedTokens ?? null,
        timeToFirstChunkMs: first === undefined ? null : first - started,
        durationMs: Math.max(0, ended - started),
        finishReason: chunk?.finishReason ?? ownFinishReason ?? null,
        errorCode,
        ...this.cost(call.operation, usage, price),
        startedAt: new Date(started),
      };
      const id = await row.catch(() => null);
      if (id === null) await this.calls.record(record);
      else await this.calls.close(id, record);
    } catch (err) {
      this.logger.error(
        `ask ${call.askId}: the ${call.operation} call could not be recorded: ${(err as Error).message}`,
      );
    }
  }
}
