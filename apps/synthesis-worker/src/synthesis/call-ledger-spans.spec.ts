import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { loadConfig } from '@ask/config';
import { inSpan, startTracing, type TracingHandle } from '@ask/observability';
import { NO_CALL_RECORDS } from '@ask/persistence';
import { CallLedger } from './call-ledger';

describe(`${CallLedger.name} spans (tracing on, in-memory exporter)`, () => {
  let exporter: InMemorySpanExporter;
  let handle: TracingHandle | undefined;
  beforeEach(() => {
    exporter = new InMemorySpanExporter();
    handle = startTracing('synthesis-worker', loadConfig({}), exporter);
  });
  afterEach(async () => {
    await handle?.shutdown();
  });

  it('makes one client span per attempt under the active span: the retried one failed, the last with the GenAI usage', async () => {
    const ledger = new CallLedger(NO_CALL_RECORDS);
    await inSpan('ask-synthesis process', {}, async () => {
      const meter = await ledger.start({
        projectId: 'p',
        sessionId: 's',
        askId: 'a',
        purpose: 'answer',
        operation: 'chat',
        provider: 'anthropic',
        requestedModel: 'claude-sonnet-4-5',
        plannedTokens: 3000,
      });
      meter.retried('rate_limited', 0);
      meter.firstChunk();
      meter.usage({
        type: 'usage',
        promptTokens: 3015,
        completionTokens: 42,
        raw: { input_tokens: 15, cache_read_input_tokens: 3000, output_tokens: 42 },
        convention: 'anthropic',
        model: 'claude-sonnet-4-5-20250929',
        finishReason: 'end_turn',
      });
      await meter.finish(null);
    });
    const spans = exporter.getFinishedSpans();
    const parent = spans.find((s) => s.name === 'ask-synthesis process');
    const calls = spans.filter((s) => s.name === 'chat claude-sonnet-4-5');
    expect(calls.map((s) => s.parentSpanContext?.spanId)).toEqual([
      parent?.spanContext().spanId,
      parent?.spanContext().spanId,
    ]);
    const base = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.system': 'anthropic',
      'gen_ai.request.model': 'claude-sonnet-4-5',
      'ask.call.purpose': 'answer',
      'ask.planned_tokens': 3000,
    };
    expect(calls[0].attributes).toEqual({ ...base, 'error.type': 'rate_limited' });
    expect(calls[0].status.code).toBe(2);
    // Anthropic's input excludes the cache read: 15 + 3,000 = 3,015 input tokens, 3,000 of them cached.
    expect(calls[1].attributes).toEqual({
      ...base,
      'gen_ai.response.model': 'claude-sonnet-4-5-20250929',
      'gen_ai.response.finish_reasons': ['end_turn'],
      'gen_ai.usage.input_tokens': 3015,
      'gen_ai.usage.output_tokens': 42,
      'gen_ai.usage.cache_read.input_tokens': 3000,
      'gen_ai.usage.cache_creation.input_tokens': 0,
      'gen_ai.usage.reasoning.output_tokens': 0,
    });
    expect(calls[1].status.code).toBe(0);
  });
});
