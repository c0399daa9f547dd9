import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from '../testing';
import { CALL_IN_FLIGHT, type ProviderCallRecord, ProviderCallsRepository } from './provider-calls.repository';

describe(ProviderCallsRepository.name, () => {
  let db: TestDatabase;
  let calls: ProviderCallsRepository;
  let projectId: string;
  const s1 = randomUUID();
  const s2 = randomUUID();

  const call = (over: Partial<ProviderCallRecord>): ProviderCallRecord => ({
    projectId,
    sessionId: s1,
    askId: randomUUID(),
    operation: 'chat',
    purpose: 'answer',
    provider: 'anthropic',
    requestedModel: 'claude-sonnet-4-5',
    durationMs: 10,
    startedAt: new Date('2026-03-01T10:00:00Z'),
    ...over,
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    calls = new ProviderCallsRepository(db.dataSource);
    [{ id: projectId }] = await db.dataSource.query(`INSERT INTO projects (name) VALUES ('usage') RETURNING id`);
  });
  afterAll(() => db.drop());

  describe('record / forAsk', () => {
    it('stores the raw usage as sent and the normalised buckets beside it', async () => {
      const askId = randomUUID();
      const raw = {
        input_tokens: 12,
        cache_creation_input_tokens: 3000,
        cache_read_input_tokens: 0,
        output_tokens: 48,
      };
      await calls.record(
        call({
          askId,
          rawUsage: raw,
          inputTokens: 3012,
          cacheReadTokens: 0,
          cacheWriteTokens: 3000,
          outputTokens: 48,
          reasoningTokens: 0,
          plannedTokens: 3020,
          timeToFirstChunkMs: 7,
          finishReason: 'end_turn',
          answeringModel: 'claude-sonnet-4-5-20250929',
          costUsd: '0.011970000000',
          priceFamily: 'claude-sonnet-4',
        }),
      );
      const [stored] = await calls.forAsk(askId);
      expect(stored).toMatchObject({
        rawUsage: raw,
        inputTokens: 3012,
        cacheWriteTokens: 3000,
        plannedTokens: 3020,
        timeToFirstChunkMs: 7,
        finishReason: 'end_turn',
        errorCode: null,
        costUsd: '0.011970000000',
        answeringModel: 'claude-sonnet-4-5-20250929',
      });
    });

    it('refuses a cache larger than the input (the table checks what the normaliser checks)', async () => {
      await expect(calls.record(call({ inputTokens: 10, cacheReadTokens: 11, cacheWriteTokens: 0 }))).rejects.toThrow(
        /provider_calls_check/,
      );
      await expect(calls.record(call({ outputTokens: -1 }))).rejects.toThrow(/provider_calls_output_tokens_check/);
    });
  });

  describe('open / close', () => {
    it('writes the row in flight before the call and completes the same row after it', async () => {
      const askId = randomUUID();
      const started = new Date('2026-03-01T11:00:00Z');
      const id = await calls.open({
        projectId,
        sessionId: s1,
        askId,
        operation: 'chat',
        purpose: 'answer',
        provider: 'openai',
        requestedModel: 'gpt-4o',
        plannedTokens: 900,
        startedAt: started,
      });
      expect((await calls.forAsk(askId)).map((r) => [r.id, r.finishReason, r.durationMs, r.inputTokens])).toEqual([
        [id, CALL_IN_FLIGHT, 0, null],
      ]);
      await calls.close(
        id,
        call({
          askId,
          provider: 'openai',
          requestedModel: 'gpt-4o',
          inputTokens: 880,
          outputTokens: 42,
          plannedTokens: 900,
          durationMs: 1234,
          finishReason: 'stop',
          startedAt: started,
        }),
      );
      expect(
        (await calls.forAsk(askId)).map((r) => [r.id, r.finishReason, r.durationMs, r.inputTokens, r.outputTokens]),
      ).toEqual([[id, 'stop', 1234, 880, 42]]);
    });
  });

  describe('summarise', () => {
    let other: string;
    beforeAll(async () => {
      [{ id: other }] = await db.dataSource.query(`INSERT INTO projects (name) VALUES ('other') RETURNING id`);
      const day = (d: number, h = 12) => new Date(Date.UTC(2026, 4, d, h));
      await calls.record(
        call({
          sessionId: s1,
          startedAt: day(1),
          inputTokens: 100,
          cacheReadTokens: 40,
          cacheWriteTokens: 0,
          outputTokens: 10,
          reasoningTokens: 0,
          costUsd: '0.000123000001',
        }),
      );
      await calls.record(
        call({
          sessionId: s1,
          startedAt: day(1, 23),
          purpose: 'overflow_retry',
          inputTokens: 200,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          outputTokens: 20,
          reasoningTokens: 5,
          costUsd: '0.000000000002',
        }),
      );
      await calls.record(
        call({
          sessionId: s2,
          startedAt: day(2),
          provider: 'openai',
          requestedModel: 'gpt-4o-mini',
          inputTokens: 7,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          outputTokens: 3,
          reasoningTokens: 0,
          costUsd: '1.500000000000',
        }),
      );
      // Unpriced: tokens count, cost does not.
      await calls.record(
        call({
          sessionId: s2,
          startedAt: day(2),
          provider: 'openai',
          requestedModel: 'my-finetune',
          inputTokens: 5,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          outputTokens: 1,
          reasoningTokens: 0,
        }),
      );
      // Outside the range, and another project: never counted.
      await calls.record(call({ startedAt: day(3), inputTokens: 1000, outputTokens: 1000, costUsd: '9.000000000000' }));
      await calls.record(
        call({ projectId: other, startedAt: day(1), inputTokens: 1000, outputTokens: 1000, costUsd: '9.000000000000' }),
      );
    });
    const range = { from: new Date('2026-05-01T00:00:00Z'), to: new Date('2026-05-03T00:00:00Z') };

    it('groups by UTC day with exact sums of the rows', async () => {
      const { groups, totals } = await calls.summarise(projectId, range, 'day');
      expect(
        groups.map((g) => [
          g.key,
          g.calls,
          g.inputTokens,
          g.cacheReadTokens,
          g.outputTokens,
          g.reasoningTokens,
          g.costUsd,
          g.unpricedCalls,
        ]),
      ).toEqual([
        ['2026-05-01', 2, 300, 40, 30, 5, '0.000123000003', 0],
        ['2026-05-02', 2, 12, 0, 4, 0, '1.500000000000', 1],
      ]);
      expect(totals).toEqual({
        calls: 4,
        inputTokens: 312,
        cacheReadTokens: 40,
        cacheWriteTokens: 0,
        outputTokens: 34,
        reasoningTokens: 5,
        costUsd: '1.500123000003',
        unpricedCalls: 1,
      });
    });

    it('groups by provider and model', async () => {
      const { groups } = await calls.summarise(projectId, range, 'model');
      expect(groups.map((g) => [g.key, g.calls, g.costUsd])).toEqual([
        ['anthropic/claude-sonnet-4-5', 2, '0.000123000003'],
        ['openai/gpt-4o-mini', 1, '1.500000000000'],
        ['openai/my-finetune', 1, '0.000000000000'],
      ]);
    });

    it('groups by session', async () => {
      const { groups } = await calls.summarise(projectId, range, 'session');
      expect(new Map(groups.map((g) => [g.key, g.inputTokens]))).toEqual(
        new Map([
          [s1, 300],
          [s2, 12],
        ]),
      );
    });
  });
});
