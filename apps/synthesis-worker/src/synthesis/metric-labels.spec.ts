import { randomBytes, randomUUID } from 'node:crypto';
import type { RetrievedItem } from '@ask/ask-contracts';
import { AskEventStream } from '@ask/event-stream';
import { type FakeUpstream } from '@ask/fake-upstream';
import { registry } from '@ask/observability';
import { ProjectsRepository, SessionsRepository } from '@ask/persistence';
import { SynthesisService } from './synthesis.service';
import { createSynthesisHarness, type SynthesisHarness } from '../testing/synthesis-harness';

/** The label names that carry a model: the budget metrics' `model`, the GenAI metrics' `gen_ai_request_model`. */
const MODEL_LABELS = ['model', 'gen_ai_request_model'];

/** Every value a model label holds on the registry, and the series count of each metric that has one. */
async function modelLabels(): Promise<{ values: string[]; series: Record<string, number> }> {
  const values = new Set<string>();
  const series: Record<string, number> = {};
  for (const metric of await registry.getMetricsAsJSON()) {
    for (const value of metric.values) {
      const labels = value.labels as Record<string, string | number>;
      const named = MODEL_LABELS.filter((l) => labels[l] !== undefined);
      if (named.length === 0) continue;
      series[metric.name] = (series[metric.name] ?? 0) + 1;
      for (const l of named) values.add(String(labels[l]));
    }
  }
  return { values: [...values].sort(), series };
}

// Integration (issue 25 item 5): one tenant asks with 50 model names of its own choosing (a
// fine-tune's name can carry a customer's and a project's name) and one catalog model, through the
// real SynthesisService against the fake OpenAI upstream, PostgreSQL and Redis. The worker's
// /metrics registry then holds the catalog family and `other`, never a tenant's model id, and a
// series count that does not grow with the names.
describe('model labels on the synthesis worker metrics', () => {
  jest.setTimeout(120_000);
  let harness: SynthesisHarness;
  let upstream: FakeUpstream;
  let events: AskEventStream;
  let projects: ProjectsRepository;
  let sessions: SessionsRepository;
  let service: SynthesisService;
  const items: RetrievedItem[] = [
    { id: 'k1', kind: 'knowledge', title: 'HNSW', text: 'An HNSW index creates a multilayer graph.', score: 0.8 },
  ];

  beforeAll(async () => {
    registry.resetMetrics();
    harness = await createSynthesisHarness({
      name: 'metric-labels',
      encryptionKey: randomBytes(32).toString('hex'),
      ledger: true,
    });
    ({ upstream, events, projects, sessions, synthesis: service } = harness);
  });

  afterAll(() => harness.close());

  /** One answered ask of a fresh project whose LLM is `model` on the fake OpenAI upstream; its last event type. */
  async function ask(model: string): Promise<string> {
    const project = await projects.create({
      name: model,
      llmSettings: { provider: 'openai', model, baseUrl: `${upstream.url}/v1`, maxTokens: 256 },
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
    });
    await projects.setCredentials(project.id, { apiKey: 'sk-test' });
    const session = await sessions.create(project.id, 's');
    const askId = randomUUID();
    const acceptedAt = new Date().toISOString();
    const ids = { projectId: project.id, sessionId: session.id };
    await events.open(askId, { ...ids, acceptedAt });
    await service.synthesize({ askId, ...ids, question: 'What does HNSW build?', acceptedAt, items }, { attempt: 1 });
    return (await events.readAll(askId)).at(-1)?.type ?? 'no event';
  }

  it('folds 50 tenant-chosen model names into `other` and keeps a catalog model by its catalog id', async () => {
    const names = Array.from({ length: 50 }, (_, i) => `ft:gpt-4o-mini:acme-corp:merger-project-falcon-${i}:AbC${i}`);
    const outcomes: string[] = [];
    for (const name of names) outcomes.push(await ask(name));
    outcomes.push(await ask('gpt-4o'));
    expect(outcomes).toEqual(Array.from({ length: 51 }, () => 'done'));

    const { values, series } = await modelLabels();
    expect(values).toEqual(['gpt-4o', 'other']);
    expect(await registry.metrics()).not.toContain('acme-corp');
    // Per metric, the series of two model values (not 51): a histogram has one series per bucket,
    // +Inf, sum and count; the GenAI token histogram one set per token type (5).
    const histogram = (buckets: number, models = 2, types = 1) => models * types * (buckets + 3);
    expect(series).toEqual({
      ask_prompt_tokens_planned: histogram(11),
      ask_budget_fill_ratio: histogram(8),
      ask_counting_error_ratio: histogram(13),
      gen_ai_client_token_usage: histogram(14, 2, 5),
      gen_ai_client_operation_duration_seconds: histogram(14),
      gen_ai_client_operation_time_to_first_chunk_seconds: histogram(14),
    });
  });
});
