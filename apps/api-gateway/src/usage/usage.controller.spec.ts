import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { type ProviderCallRecord, ProviderCallsRepository } from '@ask/persistence';
import { type Harness, startGateway } from '../security/gateway-harness';

const run = promisify(execFile);
const ROOT = path.join(__dirname, '..', '..', '..', '..');

/** Sums decimal USD strings exactly (pico-dollars as BigInt), independently of PostgreSQL's numeric sum. */
function sumUsd(values: Array<string | null>): string {
  const pico = values.reduce((s, v) => s + (v === null ? 0n : BigInt(v.replace('.', ''))), 0n);
  const digits = pico.toString().padStart(13, '0');
  return `${digits.slice(0, -12)}.${digits.slice(-12)}`;
}

// The real gateway on a throwaway database: usage summed from the stored provider_calls rows.
describe('GET /api/v1/projects/:projectId/usage', () => {
  jest.setTimeout(60_000);
  let h: Harness;
  let projectId: string;
  const sessions = [randomUUID(), randomUUID()];

  beforeAll(async () => {
    h = await startGateway();
    projectId = (await h.projects.create({ name: 'usage', llmSettings: { provider: 'local', model: 'local' } })).id;
    const calls = new ProviderCallsRepository(h.db.dataSource);
    const base = {
      projectId,
      operation: 'chat',
      purpose: 'answer',
      provider: 'anthropic',
      requestedModel: 'claude-sonnet-4-6',
      durationMs: 5,
    } as const;
    // 40 calls over three days and two models, costs with 12 decimals (the kind of figures the ledger writes).
    for (let i = 0; i < 40; i += 1) {
      const record: ProviderCallRecord = {
        ...base,
        sessionId: sessions[i % 2],
        askId: randomUUID(),
        requestedModel: i % 3 === 0 ? 'gpt-4o-mini' : 'claude-sonnet-4-6',
        provider: i % 3 === 0 ? 'openai' : 'anthropic',
        inputTokens: 1000 + i * 37,
        cacheReadTokens: i % 4 === 0 ? 500 : 0,
        cacheWriteTokens: i % 5 === 0 ? 300 : 0,
        outputTokens: 50 + i,
        reasoningTokens: 0,
        costUsd: i % 7 === 0 ? null : `0.${String(1_234_567 * (i + 1)).padStart(12, '0')}`,
        startedAt: new Date(Date.UTC(2026, 5, 1 + (i % 3), 6 + (i % 12))),
      };
      await calls.record(record);
    }
  }, 60_000);
  afterAll(() => h?.close());

  const stored = async (
    from: string,
    to: string,
  ): Promise<Array<{ input_tokens: number; cost_usd: string | null; day: string; model: string }>> =>
    h.db.dataSource.query(
      `SELECT input_tokens, cost_usd::text, to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, provider || '/' || requested_model AS model
         FROM provider_calls WHERE project_id = $1 AND started_at >= $2 AND started_at < $3`,
      [projectId, from, to],
    );

  it('groups by day with totals exactly equal to the stored rows', async () => {
    const reply = await h.call('GET', `/api/v1/projects/${projectId}/usage?from=2026-06-01&to=2026-06-03&groupBy=day`, {
      key: h.adminKey,
    });
    expect(reply.status).toBe(200);
    const rows = await stored('2026-06-01T00:00:00Z', '2026-06-03T00:00:00Z');
    const body = reply.body as unknown as {
      groups: Array<{ key: string; calls: number; inputTokens: number; costUsd: string }>;
      totals: { calls: number; inputTokens: number; costUsd: string; unpricedCalls: number };
    };
    expect(body.groups.map((g) => g.key)).toEqual(['2026-06-01', '2026-06-02']);
    for (const g of body.groups) {
      const mine = rows.filter((r) => r.day === g.key);
      expect([g.calls, g.inputTokens, g.costUsd]).toEqual([
        mine.length,
        mine.reduce((s, r) => s + r.input_tokens, 0),
        sumUsd(mine.map((r) => r.cost_usd)),
      ]);
    }
    expect(body.totals).toMatchObject({
      calls: rows.length,
      inputTokens: rows.reduce((s, r) => s + r.input_tokens, 0),
      costUsd: sumUsd(rows.map((r) => r.cost_usd)),
      unpricedCalls: rows.filter((r) => r.cost_usd === null).length,
    });
    expect(rows.length).toBe(27);
  });

  it('groups by model and by session', async () => {
    const byModel = await h.call(
      'GET',
      `/api/v1/projects/${projectId}/usage?from=2026-06-01&to=2026-07-01&groupBy=model`,
      { key: h.adminKey },
    );
    const rows = await stored('2026-06-01T00:00:00Z', '2026-07-01T00:00:00Z');
    const groups = (byModel.body as unknown as { groups: Array<{ key: string; calls: number; costUsd: string }> })
      .groups;
    expect(groups.map((g) => [g.key, g.calls, g.costUsd])).toEqual(
      ['anthropic/claude-sonnet-4-6', 'openai/gpt-4o-mini'].map((m) => {
        const mine = rows.filter((r) => r.model === m);
        return [m, mine.length, sumUsd(mine.map((r) => r.cost_usd))];
      }),
    );
    const bySession = await h.call(
      'GET',
      `/api/v1/projects/${projectId}/usage?from=2026-06-01&to=2026-07-01&groupBy=session`,
      { key: h.adminKey },
    );
    expect(new Set((bySession.body as unknown as { groups: Array<{ key: string }> }).groups.map((g) => g.key))).toEqual(
      new Set(sessions),
    );
  });

  it.each([
    ['groupBy=week', 'groupBy: must be one of day, model, session'],
    ['from=yesterday', 'from: must be an ISO 8601 date or date-time'],
    ['from=2026-06-03&to=2026-06-01', 'from: must be before to'],
    ['from=2020-01-01&to=2026-01-01', 'from, to: at most 366 days apart'],
  ])('answers %s with a typed 400', async (query, details) => {
    const reply = await h.call('GET', `/api/v1/projects/${projectId}/usage?${query}`, { key: h.adminKey });
    expect([reply.status, reply.body?.code, reply.body?.details]).toEqual([400, 'invalid_request', details]);
  });

  it('answers 404 for an unknown project', async () => {
    const reply = await h.call('GET', `/api/v1/projects/${randomUUID()}/usage`, { key: h.adminKey });
    expect([reply.status, reply.body?.code]).toEqual([404, 'not_found']);
  });

  it("GET /metrics serves the GenAI histograms and the gateway's own queues (depth per state, oldest waiting age)", async () => {
    const reply = await h.call('GET', '/metrics');
    expect(reply.status).toBe(200);
    for (const line of [
      '# TYPE gen_ai_client_token_usage histogram',
      '# TYPE gen_ai_client_operation_duration_seconds histogram',
      '# TYPE gen_ai_client_operation_time_to_first_chunk_seconds histogram',
      '# TYPE ask_budget_fill_ratio histogram',
      '# TYPE ask_counting_error_ratio histogram',
      'ask_queue_jobs{queue="ask-retrieval",state="waiting"} 0',
      'ask_queue_jobs{queue="ask-ingestion",state="active"} 0',
      'ask_queue_oldest_waiting_age_seconds{queue="ask-retrieval"} 0',
    ]) {
      expect(reply.text).toContain(line);
    }
    // The gateway produces no synthesis jobs: that queue is reported by the workers that use it.
    expect(reply.text).not.toContain('queue="ask-synthesis"');
  });

  it('the CLI (ask usage --json) prints the route body', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        'tools/run-ts.js',
        'apps/ask-cli/src/main.ts',
        'usage',
        '--project',
        projectId,
        '--from',
        '2026-06-01',
        '--to',
        '2026-07-01',
        '--group-by',
        'model',
        '--json',
        '--gateway',
        h.baseUrl,
        '--api-key',
        h.adminKey,
      ],
      { cwd: ROOT },
    );
    const api = await h.call('GET', `/api/v1/projects/${projectId}/usage?from=2026-06-01&to=2026-07-01&groupBy=model`, {
      key: h.adminKey,
    });
    expect(JSON.parse(stdout)).toEqual(api.body);
  });
});
