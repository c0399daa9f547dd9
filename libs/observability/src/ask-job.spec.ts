import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { loadConfig } from '@ask/config';
import { inAskJob } from './ask-job';
import { currentLogIds } from './json-logger';
import { activeTraceContext, inSpan, SpanKind, startTracing, type TracingHandle } from './tracing';

const job = (trace?: { traceparent: string }) => ({
  data: { askId: 'a1', sessionId: 's1', projectId: 'p1', trace },
  attemptsMade: 2,
});

describe(inAskJob.name, () => {
  it('runs the handler with the job ids on every log line, and returns its result (tracing off)', async () => {
    expect(await inAskJob('ask-retrieval', job(), async () => currentLogIds())).toEqual({
      askId: 'a1',
      sessionId: 's1',
      projectId: 'p1',
    });
  });

  describe('with tracing on (an in-memory exporter)', () => {
    let exporter: InMemorySpanExporter;
    let handle: TracingHandle | undefined;
    beforeEach(() => {
      exporter = new InMemorySpanExporter();
      handle = startTracing('test', loadConfig({}), exporter);
    });
    afterEach(() => handle?.shutdown());

    it("opens the queue's consumer span under the trace the job carries, with the ids, the attempt and the error's type", async () => {
      const carried = inSpan(
        'ask-retrieval send',
        () => ({ kind: SpanKind.PRODUCER }),
        () => activeTraceContext(),
      );
      await expect(
        inAskJob('ask-synthesis', job(carried), async () => {
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      const [send, process] = exporter.getFinishedSpans();
      expect(process.name).toBe('ask-synthesis process');
      expect(process.kind).toBe(SpanKind.CONSUMER);
      expect(process.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
      expect(process.spanContext().traceId).toBe(send.spanContext().traceId);
      expect(process.attributes).toEqual({
        'messaging.system': 'bullmq',
        'messaging.destination.name': 'ask-synthesis',
        'messaging.message.id': 'a1',
        'ask.id': 'a1',
        'ask.session.id': 's1',
        'ask.project.id': 'p1',
        'ask.attempt': 3,
        'error.type': 'Error',
      });
    });
  });
});
