import { randomUUID } from 'node:crypto';
import { type ProviderCallRecord, ProviderCallsRepository } from '@ask/persistence';
import { type Harness, localProject, startGateway } from '../security/gateway-harness';
import type { SessionUsageDto } from './session-usage.dto';

/** Sums decimal USD strings exactly (pico-dollars as BigInt), independently of PostgreSQL's numeric sum. */
function sumUsd(values: Array<string | null>): string {
  const pico = values.reduce((s, v) => s + (v === null ? 0n : BigInt(v.replace('.', ''))), 0n);
  const digits = pico.toString().padStart(13, '0');
  return `${digits.slice(0, -12)}.${digits.slice(-12)}`;
}

interface Row {
  ask_id: string | null;
  input_tokens: number | null;
  cache_read_tokens: number | null;
  output_tokens: number | null;
  cost_usd: string | null;
}

// The real gateway on a throwaway database: one session's usage, by ask, summed from its provider_calls rows.
describe('GET /api/v1/projects/:projectId/sessions/:sessionId/usage', () => {
  jest.setTimeout(60_000);
  let h: Harness;
  let project: { id: string; key: string };
  let other: { id: string; key: string };
  let sessionId: string;
  let otherSessionId: string;
  const asks = [randomUUID(), randomUUID(), randomUUID()];

  beforeAll(async () => {
    h = await startGateway();
    project = await localProject(h, 'session usage');
    other = await localProject(h, 'other');
    sessionId = (await h.sessions.create(project.id, 'pictured')).id;
    otherSessionId = (await h.sessions.create(project.id, 'another')).id;
    const calls = new ProviderCallsRepository(h.db.dataSource);
    const base = {
      projectId: project.id,
      sessionId,
      operation: 'chat',
      purpose: 'answer',
      provider: 'anthropic',
      requestedModel: 'claude-sonnet-4-6',
      durationMs: 5,
      reasoningTokens: 0,
      cacheWriteTokens: 0,
    } as const;
    // 12 calls of the session over three asks (answers, an overflow retry, summaries, one unpriced),
    // ask 3 first on the clock so the order is by first call, not by id; noise in another session.
    for (let i = 0; i < 12; i += 1) {
      const record: ProviderCallRecord = {
        ...base,
        askId: asks[i % 3],
        purpose: i === 4 ? 'overflow_retry' : i >= 9 ? 'summary' : 'answer',
        inputTokens: 900 + i * 41,
        cacheReadTokens: i % 4 === 0 ? 300 : 0,
        outputTokens: 30 + i,
        costUsd: i === 7 ? null : `0.${String(7_654_321 * (i + 1)).padStart(12, '0')}`,
        startedAt: new Date(Date.UTC(2026, 6, 2, 10, [5, 6, 1][i % 3], i)),
      };
      await calls.record(record);
    }
    await calls.record({
      ...base,
      sessionId: otherSessionId,
      askId: randomUUID(),
      inputTokens: 5,
      costUsd: '1.0',
      startedAt: new Date(),
    });
    await calls.record({
      ...base,
      projectId: other.id,
      askId: randomUUID(),
      inputTokens: 5,
      costUsd: '1.0',
      startedAt: new Date(),
    });
  }, 60_000);
  afterAll(() => h?.close());

  const stored = (): Promise<Row[]> =>
    h.db.dataSource.query(
      `SELECT ask_id, input_tokens, cache_read_tokens, output_tokens, cost_usd::text FROM provider_calls
        WHERE project_id = $1 AND session_id = $2`,
      [project.id, sessionId],
    );

  it("sums each ask's rows and the session's, exactly, with the project key", async () => {
    const reply = await h.call('GET', `/api/v1/projects/${project.id}/sessions/${sessionId}/usage`, {
      key: project.key,
    });
    expect(reply.status).toBe(200);
    const body = reply.body as unknown as SessionUsageDto;
    const rows = await stored();
    expect(rows.length).toBe(12);
    const figures = (mine: Row[]) => ({
      calls: mine.length,
      inputTokens: mine.reduce((s, r) => s + (r.input_tokens ?? 0), 0),
      cacheReadTokens: mine.reduce((s, r) => s + (r.cache_read_tokens ?? 0), 0),
      cacheWriteTokens: 0,
      outputTokens: mine.reduce((s, r) => s + (r.output_tokens ?? 0), 0),
      reasoningTokens: 0,
      costUsd: sumUsd(mine.map((r) => r.cost_usd)),
      unpricedCalls: mine.filter((r) => r.cost_usd === null).length,
    });
    expect(body).toEqual({
      sessionId,
      // Ask 3's first call is the earliest (10:01), then ask 1 (10:05), then ask 2 (10:06).
      asks: [asks[2], asks[0], asks[1]].map((askId) => ({
        askId,
        ...figures(rows.filter((r) => r.ask_id === askId)),
      })),
      totals: figures(rows),
    });
    expect(body.totals.unpricedCalls).toBe(1);
  });

  it('answers an empty session with no asks and zero totals', async () => {
    const empty = (await h.sessions.create(project.id, 'empty')).id;
    const reply = await h.call('GET', `/api/v1/projects/${project.id}/sessions/${empty}/usage`, { key: h.adminKey });
    expect([reply.status, reply.body]).toEqual([
      200,
      {
        sessionId: empty,
        asks: [],
        totals: {
          calls: 0,
          inputTokens: 0,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          outputTokens: 0,
          reasoningTokens: 0,
          costUsd: '0.000000000000',
          unpricedCalls: 0,
        },
      },
    ]);
  });

  it.each([
    [
      'an unknown session',
      () => `/api/v1/projects/${project.id}/sessions/${randomUUID()}/usage`,
      () => project.key,
      404,
    ],
    ["another project's key", () => `/api/v1/projects/${project.id}/sessions/${sessionId}/usage`, () => other.key, 404],
    [
      'a session of another project',
      () => `/api/v1/projects/${other.id}/sessions/${sessionId}/usage`,
      () => other.key,
      404,
    ],
    ['no key', () => `/api/v1/projects/${project.id}/sessions/${sessionId}/usage`, () => '', 401],
    [
      'a session id that is not a UUID',
      () => `/api/v1/projects/${project.id}/sessions/nope/usage`,
      () => project.key,
      400,
    ],
  ])('answers %s with a typed error', async (_what, path, key, status) => {
    const reply = await h.call('GET', path(), key() ? { key: key() } : {});
    expect([reply.status, reply.body?.code]).toEqual([
      status,
      { 400: 'invalid_request', 401: 'unauthorized', 404: 'not_found' }[status],
    ]);
  });
});
