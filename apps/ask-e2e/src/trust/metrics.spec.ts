import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { startFakeUpstream, type FakeUpstream } from '@ask/fake-upstream';
import { startTrustStack, type TrustStack } from './trust-stack';

const WORKERS = ['retrieval-worker', 'synthesis-worker', 'ingestion-worker'] as const;
/** The label names that carry a model on our metrics. */
const MODEL_LABEL = /\b(?:model|gen_ai_request_model)="([^"]*)"/g;

/** `connected`, or the socket error code (`ECONNREFUSED`) of a TCP connect to host:port. */
const reach = (host: string, port: number) =>
  new Promise<string>((done) => {
    const socket = connect({ host, port, timeout: 3_000 });
    socket.once('connect', () => (socket.destroy(), done('connected')));
    socket.once('timeout', () => (socket.destroy(), done('timeout')));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });

/**
 * Metrics are safe to scrape (issue 25 item 5), with the four apps as processes: one project key
 * sets 50 model names of its own (fine-tune names carrying a customer's and a project's name) and
 * asks once with each, through the API, against the fake OpenAI upstream. The synthesis worker's
 * `/metrics` then carries the catalog family and `other` as model label values, never a tenant's
 * model id; every worker's health port listens on loopback only; with ASK_METRICS_TOKEN set, every
 * `/metrics` (gateway and workers) is a 401 without the token.
 */
describe('metrics safe to scrape (four apps, fake OpenAI upstream)', () => {
  const token = `scrape-${'k'.repeat(26)}`;
  let upstream: FakeUpstream;
  let t: TrustStack;

  beforeAll(async () => {
    upstream = await startFakeUpstream({ chunkDelayMs: 0 });
    t = await startTrustStack('metrics', { ASK_PROVIDER_URL_ALLOWLIST: upstream.url, ASK_METRICS_TOKEN: token });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await upstream?.close();
  });

  const metricsUrl = (app: (typeof WORKERS)[number] | 'api-gateway') =>
    app === 'api-gateway'
      ? `${t.stack.gatewayUrl}/metrics`
      : t.stack.apps[app].healthUrl.replace(/\/health$/, '/metrics');
  const scrape = (url: string, withToken = true) =>
    fetch(url, { headers: withToken ? { authorization: `Bearer ${token}` } : {} });

  it('labels 50 tenant model names as `other` and the catalog model by its catalog id', async () => {
    const p = await t.project(
      'tenant',
      {
        llmSettings: { provider: 'openai', model: 'gpt-4o', baseUrl: `${upstream.url}/v1`, maxTokens: 256 },
        embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
      },
      { apiKey: 'sk-test-metrics' },
    );
    const names = [
      ...Array.from({ length: 50 }, (_, i) => `ft:gpt-4o-mini:acme-corp:merger-project-falcon-${i}:Zx${i}`),
      'gpt-4o',
    ];
    const outcomes: string[] = [];
    for (const model of names) {
      const patch = await t.call('PATCH', `/api/v1/projects/${p.id}`, {
        key: p.key,
        json: { llm: { provider: 'openai', model, baseUrl: `${upstream.url}/v1`, maxTokens: 256 } },
      });
      expect(patch.status).toBe(200);
      const outcome = await p.client.askAndWait(p.id, 'What does the index build?');
      outcomes.push(outcome.done ? 'done' : `error ${outcome.error?.code}`);
    }
    expect(outcomes).toEqual(names.map(() => 'done'));

    const text = await (await scrape(metricsUrl('synthesis-worker'))).text();
    const values = new Set([...text.matchAll(MODEL_LABEL)].map((m) => m[1]));
    expect([...values].sort()).toEqual(['gpt-4o', 'other']);
    expect(text).not.toContain('acme-corp');
    const series = text.split('\n').filter((line) => /^ask_prompt_tokens_planned_bucket\{/.test(line));
    // 12 buckets (11 bounds and +Inf) per model value: 24, not 51 × 12.
    expect(series).toHaveLength(24);
  }, 300_000);

  it("listens on loopback only: the machine's other IPv4 addresses refuse every worker's health port", async () => {
    const others = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .filter((a) => a.family === 'IPv4' && !a.internal)
      .map((a) => a.address);
    for (const app of WORKERS) {
      const port = Number(new URL(t.stack.apps[app].healthUrl).port);
      expect([app, await reach('127.0.0.1', port)]).toEqual([app, 'connected']);
      expect([app, await Promise.all(others.map((a) => reach(a, port)))]).toEqual([
        app,
        others.map(() => 'ECONNREFUSED'),
      ]);
    }
  });

  it('answers every /metrics 401 without ASK_METRICS_TOKEN and 200 with it; /health stays open', async () => {
    const got: Array<[string, number, number, number]> = [];
    for (const app of ['api-gateway', ...WORKERS] as const) {
      const health = app === 'api-gateway' ? `${t.stack.gatewayUrl}/health` : t.stack.apps[app].healthUrl;
      got.push([
        app,
        (await scrape(metricsUrl(app), false)).status,
        (await scrape(metricsUrl(app))).status,
        (await fetch(health)).status,
      ]);
    }
    expect(got).toEqual([
      ['api-gateway', 401, 200, 200],
      ['retrieval-worker', 401, 200, 200],
      ['synthesis-worker', 401, 200, 200],
      ['ingestion-worker', 401, 200, 200],
    ]);
  });
});
