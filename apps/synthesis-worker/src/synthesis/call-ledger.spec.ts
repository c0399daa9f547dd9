import { randomBytes, randomUUID } from 'node:crypto';
import type { BudgetEvent, DoneEvent, RetrievedItem } from '@ask/ask-contracts';
import { AskEventStream } from '@ask/event-stream';
import { type FakeUpstream } from '@ask/fake-upstream';
import { ProjectsRepository, ProviderCallsRepository, SessionsRepository } from '@ask/persistence';
import { normalizeChunk } from './call-ledger';
import { SynthesisService } from './synthesis.service';
import { createSynthesisHarness, type SynthesisHarness } from '../testing/synthesis-harness';

describe(normalizeChunk.name, () => {
  it('logs an inconsistent usage object at error level with the raw object, and keeps no bucket', () => {
    const errors: string[] = [];
    const raw = { input_tokens: -4, output_tokens: 10 };
    const result = normalizeChunk(
      { type: 'usage', promptTokens: -4, completionTokens: 10, raw, convention: 'anthropic' },
      'anthropic',
      { error: (m: string) => void errors.push(m) },
    );
    expect(result).toEqual({
      usage: null,
      usageError: 'anthropic usage is inconsistent: input_tokens is negative (-4)',
    });
    expect(errors).toEqual([
      'anthropic usage refused: input_tokens is negative (-4); raw usage {"input_tokens":-4,"output_tokens":10}',
    ]);
  });

  it('has no usage when the adapter reported no convention', () => {
    expect(
      normalizeChunk({ type: 'usage', promptTokens: null, completionTokens: null }, 'openai', {
        error: () => undefined,
      }),
    ).toEqual({ usage: null, usageError: null });
  });
});

// Integration: the real SynthesisService writes one provider_calls row per upstream call, on a
// throwaway PostgreSQL database, the machine's Redis (own key prefix) and the fake upstream.
describe('provider_calls rows written by SynthesisService', () => {
  jest.setTimeout(60_000);
  let harness: SynthesisHarness;
  let upstream: FakeUpstream;
  let events: AskEventStream;
  let projects: ProjectsRepository;
  let sessions: SessionsRepository;
  let calls: ProviderCallsRepository;
  let service: SynthesisService;
  const items: RetrievedItem[] = [
    {
      id: 'k1',
      kind: 'knowledge',
      title: 'HNSW',
      text: 'An HNSW index creates a multilayer graph with better query performance.',
      score: 0.8,
    },
  ];

  beforeAll(async () => {
    harness = await createSynthesisHarness({
      name: 'ledger-test',
      upstream: { chunkDelayMs: 0, enforce: { promptScale: 2.5, windows: { 'dense-gw': 8192, 'dense-gw2': 8192 } } },
      encryptionKey: randomBytes(32).toString('hex'),
      ledger: true,
      env: {
        ASK_PRICE_OVERRIDES: JSON.stringify([
          { model: '^dense-gw$', input: 0.5, cacheRead: 0, cacheWrite: 0, output: 1.5, source: 'spec' },
        ]),
      },
    });
    ({ upstream, events, projects, sessions, calls, synthesis: service } = harness);
  });

  afterAll(() => harness.close());

  async function ask(
    llm: NonNullable<Parameters<ProjectsRepository['create']>[0]['llmSettings']>,
    turns: number,
    apiKey?: string,
  ) {
    const project = await projects.create({
      name: 'p',
      llmSettings: llm,
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
    });
    if (apiKey) await projects.setCredentials(project.id, { apiKey });
    const session = await sessions.create(project.id, 's');
    const answer = 'The planner keeps the newest pairs that fit and drops the oldest ones first. '.repeat(60).trim();
    for (let i = 0; i < turns; i += 1)
      await sessions.appendMessage({
        projectId: project.id,
        sessionId: session.id,
        askId: randomUUID(),
        question: `Earlier question ${i}?`,
        answer,
      });
    const askId = randomUUID();
    const acceptedAt = new Date().toISOString();
    const ids = { projectId: project.id, sessionId: session.id };
    await events.open(askId, { ...ids, acceptedAt });
    const before = upstream.requests.length;
    await service.synthesize(
      { askId, ...ids, question: 'What does the planner keep?', acceptedAt, items },
      { attempt: 1 },
    );
    const evs = await events.readAll(askId);
    return { askId, ...ids, evs, requests: upstream.requests.slice(before), rows: await calls.forAsk(askId) };
  }

  it('an overflow and its retry are two rows: the refused call with its typed code, the answer with its raw usage and cost', async () => {
    const { rows, requests, evs, projectId, sessionId } = await ask(
      { provider: 'openai', model: 'dense-gw', baseUrl: `${upstream.url}/v1`, contextWindow: 8192, maxTokens: 1024 },
      12,
      'sk-test',
    );
    const chats = requests.filter((r) => r.route.endsWith('chat'));
    expect(chats).toHaveLength(2);
    const budgets = evs.filter((e) => e.type === 'budget').map((e) => e.data as BudgetEvent);
    const done = evs.at(-1)!;
    expect(done.type).toBe('done');
    const prompt = chats[1].promptTokens as number;
    const completion = (done.data as { usage: { completionTokens: number } }).usage.completionTokens;
    expect(
      rows.map((r) => [r.operation, r.purpose, r.errorCode, r.finishReason, r.plannedTokens, r.projectId, r.sessionId]),
    ).toEqual([
      ['chat', 'answer', 'context_overflow', null, budgets[0].used, projectId, sessionId],
      ['chat', 'overflow_retry', null, 'stop', budgets[1].used, projectId, sessionId],
    ]);
    expect(rows[0]).toMatchObject({ rawUsage: null, inputTokens: null, costUsd: null, timeToFirstChunkMs: null });
    expect(rows[1]).toMatchObject({
      rawUsage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
      inputTokens: prompt,
      cacheReadTokens: 0,
      outputTokens: completion,
      reasoningTokens: 0,
      priceFamily: 'override:^dense-gw$',
    });
    // Independent figure: prompt × 0.5 + completion × 1.5 micro-dollars, as a 12-place USD decimal.
    const pico = BigInt(prompt) * 500_000n + BigInt(completion) * 1_500_000n;
    expect(rows[1].costUsd).toBe(`0.${pico.toString().padStart(12, '0')}`);
    expect(rows[1].timeToFirstChunkMs).not.toBeNull();
    expect(rows[1].timeToFirstChunkMs!).toBeLessThanOrEqual(rows[1].durationMs);
  });

  it('the answer is stored with the budget it was answered under (the re-plan after the overflow) and its sources', async () => {
    // Its own model: calibration learnt from the first test's overflow would avoid this one's.
    const { askId, sessionId, evs } = await ask(
      { provider: 'openai', model: 'dense-gw2', baseUrl: `${upstream.url}/v1`, contextWindow: 8192, maxTokens: 1024 },
      12,
      'sk-test',
    );
    const budgets = evs.filter((e) => e.type === 'budget').map((e) => e.data as BudgetEvent);
    expect(budgets).toHaveLength(2);
    const done = evs.at(-1)!.data as DoneEvent;
    const stored = (await sessions.history(sessionId)).find((m) => m.askId === askId)!;
    // What a reopened session shows is what the live view showed last: the second budget, the done sources.
    expect(stored.budget).toEqual(budgets[1]);
    expect(stored.budget?.turnsDropped).toBeGreaterThan(0);
    expect(stored.sources).toEqual(done.sources);
    expect(stored.sources).toEqual([{ kind: 'knowledge', id: 'k1', title: 'HNSW' }]);
    // Turns stored before this one have no budget of their own (they were appended directly).
    expect((await sessions.history(sessionId)).filter((m) => m.budget === null)).toHaveLength(12);
  });

  it('each attempt of a retried call is its own row: a 429 on count_tokens, then on the chat call', async () => {
    upstream.setFault({ kind: '429', retryAfterSeconds: 0, endpoint: 'count' }, 1);
    const counted = await ask(
      { provider: 'anthropic', model: 'claude-sonnet-4-6', baseUrl: upstream.url },
      0,
      `sk-ant-test-${randomUUID()}`,
    );
    expect(counted.evs.at(-1)?.type).toBe('done');
    expect(counted.rows.map((r) => [r.operation, r.errorCode, r.finishReason])).toEqual([
      ['count_tokens', 'llm_upstream', null],
      ['count_tokens', null, null],
      ['chat', null, 'end_turn'],
    ]);
    upstream.setFault({ kind: '429', retryAfterSeconds: 0 }, 1);
    const streamed = await ask(
      { provider: 'openai', model: 'gpt-4o-mini', baseUrl: `${upstream.url}/v1` },
      0,
      'sk-test',
    );
    expect(streamed.evs.at(-1)?.type).toBe('done');
    expect(
      streamed.rows.map((r) => [r.operation, r.purpose, r.errorCode, r.inputTokens === null, r.costUsd === null]),
    ).toEqual([
      ['chat', 'answer', 'llm_upstream', true, true],
      ['chat', 'answer', null, false, false],
    ]);
  });

  it('an Anthropic ask is a free count_tokens row then the answer, normalized and priced as Claude Sonnet 4', async () => {
    const { rows, requests, evs } = await ask(
      { provider: 'anthropic', model: 'claude-sonnet-4-6', baseUrl: upstream.url },
      0,
      `sk-ant-test-${randomUUID()}`,
    );
    expect(evs.at(-1)?.type).toBe('done');
    const chat = requests.find((r) => r.route === 'anthropic.messages')!;
    const prompt = chat.promptTokens as number;
    expect(rows.map((r) => [r.operation, r.purpose, r.costUsd, r.priceFamily])).toEqual([
      ['count_tokens', 'count', '0.000000000000', 'count endpoint (free)'],
      ['chat', 'answer', expect.any(String), 'claude-sonnet-4'],
    ]);
    const answer = rows[1];
    expect(answer.rawUsage).toEqual({
      input_tokens: prompt,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: answer.outputTokens,
    });
    expect([
      answer.inputTokens,
      answer.cacheReadTokens,
      answer.cacheWriteTokens,
      answer.finishReason,
      answer.answeringModel,
    ]).toEqual([prompt, 0, 0, 'end_turn', 'claude-sonnet-4-6']);
    // $3 per MTok input, $15 per MTok output.
    const pico = BigInt(prompt) * 3_000_000n + BigInt(answer.outputTokens!) * 15_000_000n;
    expect(answer.costUsd).toBe(`0.${pico.toString().padStart(12, '0')}`);
  });
});
