import {
  type Attributes,
  context,
  type Context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import type { TraceContext } from '@ask/ask-contracts';
import type { AppConfig } from '@ask/config';

export { SpanKind } from '@opentelemetry/api';
export type { Span } from '@opentelemetry/api';

/** The instrumentation scope every span of the service is created under. */
export const TRACER_NAME = 'ask-service';

/** The tracer while tracing is on; undefined while it is off, so every helper below is a plain call. */
let tracer: Tracer | undefined;
let provider: BasicTracerProvider | undefined;

/** What {@link startTracing} returns: flush and stop exporting (at shutdown). */
export interface TracingHandle {
  /** Exports the spans still batched, then stops the provider. Never throws. */
  shutdown(): Promise<void>;
}

/**
 * Turns tracing on for this process when the operator set `ASK_TRACING=otlp`: a tracer provider whose
 * spans are batched (`OTEL_BSP_SCHEDULE_DELAY` ms) and sent over OTLP/HTTP JSON to
 * `OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces`, the W3C trace-context propagator, and the
 * AsyncLocalStorage context manager (a span started inside a job's span is its child). With
 * `ASK_TRACING=off` (the default) nothing is registered and every helper of this file only calls its
 * function: no span object, no attribute is built.
 *
 * @param exporter replaces the OTLP exporter (specs pass an `InMemorySpanExporter`; spans then go to it
 *   one by one, unbatched). Given, it turns tracing on whatever `ASK_TRACING` says.
 * @returns the handle to flush at shutdown, or undefined when tracing stays off.
 */
export function startTracing(
  serviceName: string,
  config: Pick<AppConfig, 'ASK_TRACING' | 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_BSP_SCHEDULE_DELAY'>,
  exporter?: SpanExporter,
): TracingHandle | undefined {
  if (!exporter && config.ASK_TRACING !== 'otlp') return undefined;
  if (provider) return { shutdown: stopTracing };
  const processor = exporter
    ? new SimpleSpanProcessor(exporter)
    : new BatchSpanProcessor(
        new OTLPTraceExporter({ url: `${config.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` }),
        { scheduledDelayMillis: config.OTEL_BSP_SCHEDULE_DELAY },
      );
  provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName, 'service.namespace': 'ask' }),
    spanProcessors: [processor],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  tracer = provider.getTracer(TRACER_NAME);
  return { shutdown: stopTracing };
}

/**
 * {@link startTracing} for an app's process, from its validated config; at SIGTERM / SIGINT the
 * batched spans are flushed (best effort: the process exits once Nest has closed).
 */
export function startProcessTracing(
  serviceName: string,
  config: Pick<AppConfig, 'ASK_TRACING' | 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_BSP_SCHEDULE_DELAY'>,
): void {
  const handle = startTracing(serviceName, config);
  if (!handle) return;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => void handle.shutdown());
}

/** Flushes and stops the provider, and turns tracing off again (the globals are released). */
async function stopTracing(): Promise<void> {
  const current = provider;
  provider = undefined;
  tracer = undefined;
  if (!current) return;
  await current.shutdown().catch(() => undefined);
  trace.disable();
  propagation.disable();
  context.disable();
}

/** Whether spans are being recorded in this process. */
export function tracingEnabled(): boolean {
  return tracer !== undefined;
}

/** What a span is started with: its kind (default internal) and attributes. */
export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
}

/**
 * Runs `fn` inside a span named `name`, a child of the active span; the span ends when `fn` returns or
 * its promise settles, with status error and the exception's type and message when it throws (the
 * error is rethrown unchanged). With tracing off, `fn(undefined)` and nothing else.
 * @param attributes a function, so nothing is computed while tracing is off.
 */
export function inSpan<T>(
  name: string,
  options: SpanOptions | (() => SpanOptions),
  fn: (span: Span | undefined) => T,
): T {
  if (!tracer) return fn(undefined);
  const { kind, attributes } = typeof options === 'function' ? options() : options;
  return tracer.startActiveSpan(name, { kind, attributes }, (span) => settle(span, fn));
}

/** Ends `span` once `fn`'s result is known, recording a thrown error or a rejection. */
function settle<T>(span: Span, fn: (span: Span) => T): T {
  let result: T;
  try {
    result = fn(span);
  } catch (err) {
    fail(span, err);
    span.end();
    throw err;
  }
  if (result instanceof Promise) {
    return result.then(
      (value: unknown) => {
        span.end();
        return value;
      },
      (err: unknown) => {
        fail(span, err);
        span.end();
        throw err;
      },
    ) as T;
  }
  span.end();
  return result;
}

/**
 * Marks a span failed: status error, `error.type` the typed code (or the error's class), and one
 * `exception` event with the type only. The message stays out: an upstream message may quote the prompt.
 */
export function fail(span: Span, err: unknown, errorType?: string): void {
  const type = errorType ?? errorTypeOf(err);
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute('error.type', type);
  span.addEvent('exception', { 'exception.type': type });
}

function errorTypeOf(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code) return code;
    const name = (err as { name?: unknown }).name;
    if (typeof name === 'string' && name) return name;
  }
  return 'Error';
}

/**
 * Starts a span that the caller ends (a call measured across callbacks, like the call ledger's
 * meters), a child of the active span. Undefined while tracing is off.
 */
export function startSpan(name: string, options: SpanOptions | (() => SpanOptions)): Span | undefined {
  if (!tracer) return undefined;
  const { kind, attributes } = typeof options === 'function' ? options() : options;
  return tracer.startSpan(name, { kind, attributes });
}

/**
 * The active span's context as W3C headers for a job payload ({@link TraceContext}), or undefined
 * while tracing is off or no span is active.
 */
export function activeTraceContext(): TraceContext | undefined {
  if (!tracer) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  if (!carrier['traceparent']) return undefined;
  return carrier['tracestate']
    ? { traceparent: carrier['traceparent'], tracestate: carrier['tracestate'] }
    : { traceparent: carrier['traceparent'] };
}

/**
 * Runs a job's handler inside a consumer span that continues the trace its payload carries (a
 * malformed or absent `traceparent` starts a new trace). With tracing off, only `fn()`.
 * @param name `<queue> process`, the OpenTelemetry messaging span name.
 */
export function inJobSpan<T>(
  name: string,
  carried: TraceContext | undefined,
  attributes: () => Attributes,
  fn: () => Promise<T>,
): Promise<T> {
  if (!tracer) return fn();
  const parent: Context = carried ? propagation.extract(ROOT_CONTEXT, { ...carried }) : ROOT_CONTEXT;
  return context.with(parent, () => inSpan(name, () => ({ kind: SpanKind.CONSUMER, attributes: attributes() }), fn));
}

/**
 * The messaging attributes of a job's send and process spans (OpenTelemetry messaging conventions):
 * the queue as destination, the job id (the ask id) as message id.
 */
export function messagingAttributes(queue: string, jobId: string): Attributes {
  return {
    'messaging.system': 'bullmq',
    'messaging.destination.name': queue,
    'messaging.message.id': jobId,
  };
}
