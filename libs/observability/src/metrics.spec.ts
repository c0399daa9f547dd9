import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import {
  asksTotal,
  budgetFillRatio,
  countingErrorRatio,
  genAiOperationDuration,
  genAiTimeToFirstChunk,
  genAiTokenUsage,
  registry,
  turnsDroppedTotal,
  watchQueues,
} from './metrics';
import { testRedisUrl } from '@ask/testing';

/** The label names every metric of ours may use: bounded sets (settings, fixed lists), never an id. */
const ALLOWED_LABELS = new Set([
  'outcome',
  'model',
  'script',
  'queue',
  'state',
  'gen_ai_operation_name',
  'gen_ai_provider_name',
  'gen_ai_request_model',
  'gen_ai_token_type',
  'error_type',
  'le',
]);

describe('metrics on /metrics', () => {
  const prefix = `metrics-test-${randomUUID()}`;
  const connection = { url: testRedisUrl() };
  let queue: Queue;

  beforeAll(() => {
    queue = new Queue('ask-synthesis', { connection, prefix });
  });
  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
  });

  it('names the GenAI histograms with the convention attributes as labels', async () => {
    const labels = {
      gen_ai_operation_name: 'chat',
      gen_ai_provider_name: 'anthropic',
      gen_ai_request_model: 'claude-sonnet-4-6',
    };
    for (const [type, tokens] of [
      ['input', 3015],
      ['output', 51],
      ['cache_read', 3000],
      ['cache_creation', 0],
      ['reasoning', 0],
    ] as const) {
      genAiTokenUsage.observe({ ...labels, gen_ai_token_type: type }, tokens);
    }
    genAiOperationDuration.observe({ ...labels, error_type: '' }, 1.5);
    genAiOperationDuration.observe({ ...labels, error_type: 'context_overflow' }, 0.2);
    genAiTimeToFirstChunk.observe(labels, 0.3);
    const text = await registry.metrics();
    const l = 'gen_ai_operation_name="chat",gen_ai_provider_name="anthropic",gen_ai_request_model="claude-sonnet-4-6"';
    expect(text).toContain('# TYPE gen_ai_client_token_usage histogram');
    expect(text).toContain(`gen_ai_client_token_usage_sum{${l},gen_ai_token_type="input"} 3015`);
    expect(text).toContain(`gen_ai_client_token_usage_sum{${l},gen_ai_token_type="cache_read"} 3000`);
    expect(text).toContain(`gen_ai_client_token_usage_count{${l},gen_ai_token_type="output"} 1`);
    expect(text).toContain(`gen_ai_client_operation_duration_seconds_count{${l},error_type="context_overflow"} 1`);
    expect(text).toContain(`gen_ai_client_operation_duration_seconds_sum{${l},error_type=""} 1.5`);
    expect(text).toContain(`gen_ai_client_operation_time_to_first_chunk_seconds_sum{${l}} 0.3`);
  });

  it('counts ask outcomes by typed code and the budget figures by model', async () => {
    asksTotal.inc({ outcome: 'done' });
    asksTotal.inc({ outcome: 'context_overflow' });
    turnsDroppedTotal.inc({ model: 'gpt-4o' }, 3);
    budgetFillRatio.observe({ model: 'gpt-4o' }, 0.5);
    countingErrorRatio.observe({ model: 'gpt-4o' }, 1.25);
    const text = await registry.metrics();
    expect(text).toContain('ask_finished_total{outcome="context_overflow"} 1');
    expect(text).toContain('ask_turns_dropped_total{model="gpt-4o"} 3');
    expect(text).toContain('ask_budget_fill_ratio_bucket{le="0.5",model="gpt-4o"} 1');
    expect(text).toContain('ask_counting_error_ratio_bucket{le="1.15",model="gpt-4o"} 0');
    expect(text).toContain('ask_counting_error_ratio_bucket{le="1.25",model="gpt-4o"} 1');
  });

  it('reads each watched queue’s depth per state and oldest waiting age from Redis at scrape time', async () => {
    await queue.add('synthesize', { n: 1 }, { timestamp: Date.now() - 90_000 });
    await queue.add('synthesize', { n: 2 });
    await queue.add('synthesize', { n: 3 }, { delay: 60_000 });
    const stop = watchQueues([queue]);
    try {
      const text = await registry.metrics();
      expect(text).toContain('ask_queue_jobs{queue="ask-synthesis",state="waiting"} 2');
      expect(text).toContain('ask_queue_jobs{queue="ask-synthesis",state="delayed"} 1');
      expect(text).toContain('ask_queue_jobs{queue="ask-synthesis",state="active"} 0');
      const age = Number(/ask_queue_oldest_waiting_age_seconds\{queue="ask-synthesis"\} ([\d.]+)/.exec(text)?.[1]);
      expect(Math.floor(age / 90)).toBe(1);
    } finally {
      stop();
    }
    expect(await registry.metrics()).not.toContain('queue="ask-synthesis"');
  });

  it('uses only bounded labels: no session, ask or project id on any metric', async () => {
    const ours = (await registry.getMetricsAsJSON()).filter((m) => /^(ask_|gen_ai_)/.test(m.name));
    expect(ours.length).toBeGreaterThanOrEqual(14);
    const used = new Set(ours.flatMap((m) => m.values.flatMap((v) => Object.keys(v.labels))));
    expect([...used].filter((name) => !ALLOWED_LABELS.has(name))).toEqual([]);
  });
});
