import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { loadConfig } from '@ask/config';
import {
  activeTraceContext,
  inJobSpan,
  inSpan,
  SpanKind,
  startSpan,
  startTracing,
  type TracingHandle,
  tracingEnabled,
} from './tracing';

const config = loadConfig({});

/** Each span as `name <- parent name` (or `name` for a root), in the order they ended. */
function tree(spans: ReadableSpan[]): string[] {
  const byId = new Map(spans.map((s) => [s.spanContext().spanId, s]));
  return spans.map((s) => {
    const parent = s.parentSpanContext ? byId.get(s.parentSpanContext.spanId) : undefined;
    return parent ? `${s.name} <- ${parent.name}` : s.name;
  });
}

describe('tracing off (the default)', () => {
  it('registers nothing and only calls the functions', async () => {
    expect(startTracing('test', config)).toBeUndefined();
    expect(tracingEnabled()).toBe(false);
    let built = 0;
    const options = () => {
      built += 1;
      return {};
    };
    expect(inSpan('a', options, (span) => span)).toBeUndefined();
    expect(startSpan('b', options)).toBeUndefined();
    expect(activeTraceContext()).toBeUndefined();
    expect(
      await inJobSpan(
        'q process',
        { traceparent: '00-1-2-01' },
        () => ({}),
        async () => 7,
      ),
    ).toBe(7);
    expect(built).toBe(0);
  });
});

describe('tracing on (an in-memory exporter)', () => {
  let exporter: InMemorySpanExporter;
  let handle: TracingHandle | undefined;

  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    handle = startTracing('test', config, exporter);
  });
  afterEach(async () => {
    await handle?.shutdown();
  });

  it('nests spans through awaits, and ends each when its promise settles', async () => {
    await inSpan('root', {}, async () => {
      await inSpan('child', {}, async () => {
        await new Promise((r) => setTimeout(r, 1));
        inSpan('grandchild', {}, () => undefined);
      });
      await inSpan('second child', {}, async () => undefined);
    });
    expect(tree(exporter.getFinishedSpans())).toEqual([
      'grandchild <- child',
      'child <- root',
      'second child <- root',
      'root',
    ]);
  });

  it('marks a failed span with the typed code as error.type, without the message, and rethrows', async () => {
    const err = Object.assign(new Error('the prompt was: secret question'), { code: 'llm_upstream' });
    await expect(inSpan('call', {}, async () => Promise.reject(err))).rejects.toBe(err);
    const [span] = exporter.getFinishedSpans();
    expect(span.status.code).toBe(2);
    expect(span.attributes).toEqual({ 'error.type': 'llm_upstream' });
    expect(span.events.map((e) => [e.name, e.attributes])).toEqual([
      ['exception', { 'exception.type': 'llm_upstream' }],
    ]);
    expect(JSON.stringify([span.attributes, span.events, span.status])).not.toContain('secret question');
  });

  it('carries a trace into a job: the consumer span is a child of the producer span', async () => {
    let carried: ReturnType<typeof activeTraceContext>;
    await inSpan('ask-retrieval send', { kind: SpanKind.PRODUCER }, async () => {
      carried = activeTraceContext();
    });
    expect(carried?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    // As another process would: only the payload's traceparent joins the two.
    await inJobSpan(
      'ask-retrieval process',
      carried,
      () => ({ 'ask.id': 'a1' }),
      async () => {
        inSpan('retrieval.search', {}, () => undefined);
      },
    );
    const spans = exporter.getFinishedSpans();
    expect(tree(spans)).toEqual([
      'ask-retrieval send',
      'retrieval.search <- ask-retrieval process',
      'ask-retrieval process <- ask-retrieval send',
    ]);
    expect(new Set(spans.map((s) => s.spanContext().traceId)).size).toBe(1);
    const consumer = spans[2];
    expect(consumer.kind).toBe(SpanKind.CONSUMER);
    expect(consumer.attributes).toEqual({ 'ask.id': 'a1' });
  });

  it('starts a new trace for a job without (or with a malformed) traceparent', async () => {
    await inJobSpan(
      'q process',
      undefined,
      () => ({}),
      async () => undefined,
    );
    await inJobSpan(
      'q process',
      { traceparent: 'not-a-traceparent' },
      () => ({}),
      async () => undefined,
    );
    const spans = exporter.getFinishedSpans();
    expect(spans.map((s) => s.parentSpanContext)).toEqual([undefined, undefined]);
    expect(spans[0].spanContext().traceId).not.toBe(spans[1].spanContext().traceId);
  });
});
