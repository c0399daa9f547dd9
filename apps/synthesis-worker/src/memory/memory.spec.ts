import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { type AskEvent, type BudgetEvent, type MemorySettings, type SummariseJobData } from '@ask/ask-contracts';
import { extractiveSummary, MEMORY_ACK } from '@ask/context-budget';
import { loadConfig } from '@ask/config';
import { AskEventStream } from '@ask/event-stream';
import { FAKE_ANSWER, type FakeUpstream } from '@ask/fake-upstream';
import {
  LearnedWindowsRepository,
  ProjectsRepository,
  ProviderCallsRepository,
  SessionsRepository,
  SummariesRepository,
  UsageRepository,
} from '@ask/persistence';
import { type TestDatabase } from '@ask/persistence/testing';
import { ScriptCalibratedCounter, TiktokenCounter } from '@ask/token-counting';
import type { SynthesisService } from '../synthesis/synthesis.service';
import { createSynthesisHarness, type SynthesisHarness } from '../testing/synthesis-harness';
import { QUESTION_BONUS, type SummariserFactory, SummaryService } from './summary.service';
import { type Summariser, SummariserError } from './summarisers';

// Integration (issue 16): the real SynthesisService and SummaryService on a throwaway PostgreSQL
// database, the machine's Redis (own key prefix, a real BullMQ queue), the fake OpenAI upstream on
// loopback capturing every assembled request.
describe('conversation memory', () => {
  jest.setTimeout(120_000);
  const encryptionKey = 'b'.repeat(64);
  // A project on a custom base_url plans with the (here uncalibrated) per-script estimate.
  const approx = new ScriptCalibratedCounter({});
  let harness: SynthesisHarness;
  let db: TestDatabase;
  let upstream: FakeUpstream;
  let events: AskEventStream;
  let projects: ProjectsRepository;
  let sessions: SessionsRepository;
  let summaries: SummariesRepository;
  let queue: Queue;
  let synthesis: SynthesisService;
  let config: ReturnType<typeof loadConfig>;

  beforeAll(async () => {
    harness = await createSynthesisHarness({
      name: 'memory-test',
      encryptionKey,
      memory: 'queue',
      env: { MEMORY_SUMMARY_TIMEOUT_MS: '300' },
    });
    ({ db, upstream, events, projects, sessions, summaries, config, synthesis } = harness);
    queue = harness.queue!;
  });

  afterAll(() => harness.close());

  const summaryService = (factory?: SummariserFactory, timeoutMs = 300) =>
    new SummaryService(
      projects,
      sessions,
      summaries,
      new UsageRepository(db.dataSource),
      new LearnedWindowsRepository(db.dataSource),
      { ...config, MEMORY_SUMMARY_TIMEOUT_MS: timeoutMs },
      new ProviderCallsRepository(db.dataSource),
      factory,
    );

  /** Tokens the memory's two messages cost more than the one system message they replace (issue 25). */
  const WINDOW_PAD = 41;

  /** An OpenAI project on the fake upstream: window 3,100, max_tokens 1,024 (about 830 tokens of history with a question: one pair verbatim, not two). */
  let models = 0;
  async function newSession(memory: MemorySettings | null, contextWindow = 3100) {
    // A model of its own per test: calibration learns per model, and each test's figures stay its own.
    const project = await projects.create({
      name: 'memory',
      llmSettings: {
        provider: 'openai',
        model: `memory-gw-${(models += 1)}`,
        baseUrl: `${upstream.url}/v1`,
        contextWindow,
        maxTokens: 1024,
      },
      memorySettings: memory,
    });
    await projects.setCredentials(project.id, { apiKey: `sk-test-${randomUUID()}` });
    return { projectId: project.id, sessionId: (await sessions.create(project.id, 's')).id };
  }

  /** Turn i's question: one planted fact, then filler (about 330 tokens). */
  const question = (i: number) =>
    `Codename ${i}: Nightjar-${100 + i}. ${Array.from({ length: 30 }, (_, k) => `Filler sentence ${String.fromCharCode(97 + (k % 26))} only fills the window.`).join(' ')} What comes next?`;

  /** One ask through the synthesis service; returns its events and the request the upstream received. */
  async function ask(ids: { projectId: string; sessionId: string }, text: string) {
    const askId = randomUUID();
    const acceptedAt = new Date().toISOString();
    await events.open(askId, { ...ids, acceptedAt });
    const before = upstream.requests.length;
    await synthesis.synthesize({ askId, ...ids, question: text, acceptedAt, items: [] }, { attempt: 1 });
    const evs = await events.readAll(askId);
    const request = upstream.requests.slice(before).find((r) => r.route === 'openai.chat')?.body as {
      messages: Array<{ role: string; content: string }>;
    };
    const budget = evs.find((e) => e.type === 'budget')?.data as BudgetEvent;
    if (process.env.DEBUG_MEMORY) console.log(budget.available, budget.used, JSON.stringify(budget.memory));
    return { askId, evs, request, budget };
  }

  /** The summary job the ask enqueued, taken off the real queue and run as the processor does. */
  async function runSummaryJob(evs: AskEvent[], service = summaryService()) {
    const done = evs.find((e) => e.type === 'done')?.data as { messageId: string };
    const job = await queue.getJob(`summary-${done.messageId}`);
    expect(job?.name).toBe('summarize');
    await job?.remove();
    return service.summarise(job?.data as SummariseJobData);
  }

  const turnRows = (sessionId: string) =>
    db.dataSource.query(
      'SELECT message_id, text, token_counts, provider, model FROM turn_summaries WHERE session_id = $1',
      [sessionId],
    );

  it('per-turn: summarises each pair after done, and the next asks send turns 1–2 summarised, 3 verbatim', async () => {
    const ids = await newSession({ mode: 'per-turn', summaryModel: 'extractive', summaryMaxTokens: 40 });
    const first = await ask(ids, question(1));
    // The job is enqueued only after `done` was published (stream ids are milliseconds).
    const doneAt = Number(first.evs.find((e) => e.type === 'done')?.id.split('-')[0]);
    const done = first.evs.find((e) => e.type === 'done')?.data as { messageId: string };
    expect((await queue.getJob(`summary-${done.messageId}`))?.timestamp).toBeGreaterThanOrEqual(doneAt);
    expect(await runSummaryJob(first.evs)).toEqual({ turn: 'stored', session: 'skipped' });
    const rows = await turnRows(ids.sessionId);
    const expected = extractiveSummary(
      [
        { label: 'Q', text: question(1), bonus: QUESTION_BONUS },
        { label: 'A', text: FAKE_ANSWER },
      ],
      40,
      (t) => approx.countText(t),
    );
    const m = approx.measure(expected);
    expect(rows).toEqual([
      {
        message_id: done.messageId,
        text: expected,
        token_counts: {
          'approx:script-v1': m.estimate,
          'approx:script-v1-floor': m.floor,
          'approx:script-v1-classes': m.mask,
        },
        provider: 'local',
        model: 'extractive',
      },
    ]);
    expect(expected).toContain('Nightjar-101');
    // The stored messages are untouched.
    expect((await sessions.history(ids.sessionId)).map((m) => m.question)).toEqual([question(1)]);

    for (const i of [2, 3]) await runSummaryJob((await ask(ids, question(i))).evs);
    const fourth = await ask(ids, question(4));
    expect(fourth.budget.memory).toEqual({
      mode: 'per-turn',
      verbatimPairs: 1,
      summarisedPairs: 2,
      compactedPairs: 0,
      droppedPairs: 0,
      verbatim: [[3, 3]],
      summarised: [[1, 2]],
      compacted: [],
      dropped: [],
      sessionSummary: false,
      sessionSummaryTokens: 0,
      memoryTokens: fourth.budget.memory?.memoryTokens,
    });
    const sent = fourth.request.messages;
    // The summaries quote user text: a fenced user-role block and the acknowledgement, never system.
    expect(sent.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(sent[1].content).toContain('Nightjar-101');
    expect(sent[1].content).toContain('Nightjar-102');
    expect(sent[1].content).toMatch(/<conversation_memory>\n[\s\S]*Nightjar-102[\s\S]*\n<\/conversation_memory>$/);
    expect(sent[0].content).not.toContain('Nightjar-101');
    expect(sent[2].content).toBe(MEMORY_ACK);
    expect(sent[3].content).toBe(question(3));
    // Summaries are counted against the window: what was sent fits it.
    expect(approx.countMessages(sent.map((m) => ({ role: m.role as 'user', content: m.content })))).toBeLessThanOrEqual(
      fourth.budget.used,
    );
    expect(fourth.budget.used + 1024).toBeLessThanOrEqual(3100 - fourth.budget.margin);
  });

  it('off: no job, no summary, trimming only', async () => {
    const ids = await newSession({ mode: 'off' });
    const first = await ask(ids, question(1));
    const done = first.evs.find((e) => e.type === 'done')?.data as { messageId: string };
    expect(await queue.getJob(`summary-${done.messageId}`)).toBeUndefined();
    await ask(ids, question(2));
    const third = await ask(ids, question(3));
    expect(third.budget.memory).toMatchObject({ mode: 'off', verbatim: [[2, 2]], summarised: [], dropped: [[1, 1]] });
  });

  it.each(['compaction', 'per-turn'] as const)(
    '%s: the oldest pairs roll into the session summary (built from their per-turn summaries, every fact kept), which then stands for them: no turn dropped',
    async (mode) => {
      // Summaries of up to 72 tokens. Compaction rolls a pair into the session summary as soon as it is sent
      // as a summary line; per-turn once its line no longer fits memory's third of the room (about 240 tokens
      // here: three lines). Both from the same ask on here, since this window holds no pair verbatim beside
      // a line. The window grows by the memory's 41 tokens of fixed texts and framing (fenced user block +
      // acknowledgement) over the single system message they replaced.
      const ids = await newSession({ mode, summaryModel: 'extractive', summaryMaxTokens: 72 }, 3100 + WINDOW_PAD);
      const plans: BudgetEvent[] = [];
      let last: Awaited<ReturnType<typeof ask>> | undefined;
      for (let i = 1; i <= 9; i++) {
        last = await ask(ids, question(i));
        plans.push(last.budget);
        await runSummaryJob(last.evs);
      }
      const memory = plans.map((b) => b.memory);
      // The first ask that rolls: in compaction the first with a summary line (ask 3), in per-turn the first
      // whose lines overflow the share (ask 4: 2 lines fill 223 of its 227 tokens, the third does not fit).
      // Its job wrote the session summary (2 pairs ahead of the newest rolled one).
      const first = mode === 'compaction' ? memory.findIndex((m) => m?.summarised.length) : 3;
      expect(memory[first]).toMatchObject({ sessionSummary: false, compacted: [], dropped: [] });
      // From the next ask on the session summary rides and no turn is dropped.
      for (const m of memory.slice(first + 1)) expect(m).toMatchObject({ mode, sessionSummary: true, dropped: [] });
      const session = await summaries.sessionSummary(ids.sessionId);
      expect(session).toMatchObject({ provider: 'local', model: 'extractive' });
      const covered = last?.budget.memory?.compacted[0]?.[1] ?? 0;
      expect(covered).toBeGreaterThanOrEqual(3);
      expect(last?.request.messages[1].content).toContain(`Summary of turns 1–${covered}`);
      const { used, margin } = last?.budget ?? { used: Infinity, margin: 0 };
      expect(used + 1024).toBeLessThanOrEqual(3100 + WINDOW_PAD - margin);
      // Every planted fact of the 8 earlier turns rides along (in the session summary or a line).
      const sent = JSON.stringify(last?.request.messages);
      expect(Array.from({ length: 8 }, (_, i) => `Nightjar-${101 + i}`).filter((f) => !sent.includes(f))).toEqual([]);
    },
  );

  describe('faults: the summary is not stored, history is unchanged, the next ask plans without it', () => {
    const slow: Summariser = {
      provider: 'test',
      model: 'slow',
      summarise: (_s, _m, signal) =>
        new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(new SummariserError('timeout', 'the summariser timed out'))),
        ),
    };
    const failing: Summariser = {
      provider: 'test',
      model: 'failing',
      summarise: async () => Promise.reject(new SummariserError('failed', 'upstream 500')),
    };
    const empty: Summariser = {
      provider: 'test',
      model: 'empty',
      summarise: async () => ({ text: '  \n', promptTokens: 50, completionTokens: 0, cacheReadTokens: null }),
    };
    it.each([
      ['fails', failing, 'failed', null],
      ['times out', slow, 'timeout', null],
      ['returns empty text', empty, 'empty', 50],
    ] as Array<[string, Summariser, string, number | null]>)(
      'when the summariser %s',
      async (_label, summariser, outcome, promptTokens) => {
        const ids = await newSession({ mode: 'per-turn', summaryMaxTokens: 40 });
        const first = await ask(ids, question(1));
        expect(
          await runSummaryJob(
            first.evs,
            summaryService(async () => summariser),
          ),
        ).toEqual({ turn: outcome, session: 'skipped' });
        expect(await turnRows(ids.sessionId)).toEqual([]);
        const calls = await summaries.calls(ids.projectId);
        expect(calls.map((c) => [c.kind, c.model, c.outcome, c.promptTokens])).toEqual([
          ['turn', summariser.model, outcome, promptTokens],
        ]);
        await ask(ids, question(2));
        const third = await ask(ids, question(3));
        expect(third.budget.memory).toMatchObject({ verbatim: [[2, 2]], summarised: [], dropped: [[1, 1]] });
        expect(third.request.messages.filter((m) => m.role === 'system')).toHaveLength(1);
        expect((await sessions.history(ids.sessionId)).map((m) => m.question)).toEqual([
          question(1),
          question(2),
          question(3),
        ]);
      },
    );

    it('a session deleted while its summary job runs ends the job cleanly', async () => {
      const ids = await newSession({ mode: 'per-turn', summaryMaxTokens: 40 });
      const first = await ask(ids, question(1));
      const deleting: Summariser = {
        provider: 'test',
        model: 'deleting',
        summarise: async () => {
          await sessions.delete(ids.projectId, ids.sessionId);
          return {
            text: 'Nightjar-101 is the codename.',
            promptTokens: 20,
            completionTokens: 8,
            cacheReadTokens: null,
          };
        },
      };
      const done = first.evs.find((e) => e.type === 'done')?.data as { messageId: string };
      const data = (await queue.getJob(`summary-${done.messageId}`))?.data as SummariseJobData;
      expect(
        await runSummaryJob(
          first.evs,
          summaryService(async () => deleting),
        ),
      ).toEqual({ turn: 'gone', session: 'skipped' });
      expect(await turnRows(ids.sessionId)).toEqual([]);
      expect((await summaries.calls(ids.projectId)).map((c) => c.outcome)).toEqual(['gone']);
      // A retry of the job after the deletion ends at once, without a call.
      expect(await summaryService().summarise(data)).toEqual({ turn: 'gone', session: 'skipped' });
      expect(await summaries.calls(ids.projectId)).toHaveLength(1);
    });
  });

  describe('a summary over its budget is cut to it, never refused for an estimate (issue 26 item 5)', () => {
    const udhrDir = join(__dirname, '..', '..', '..', '..', 'fixtures', 'data', 'text-udhr');
    const languages = readdirSync(udhrDir)
      .filter((f) => f.startsWith('udhr_') && f.endsWith('.txt'))
      .map((f) => f.slice(5, -4));
    /** The first paragraphs of a UDHR translation (fixtures/data/text-udhr, source and licence there): far over 96 tokens. */
    const longText = (key: string) =>
      readFileSync(join(udhrDir, `udhr_${key}.txt`), 'utf8')
        .split(/\n+/)
        .map((p) => p.trim())
        .filter((p) => p.length >= 40)
        .slice(0, 4)
        .join(' ');

    it(`stores a 96-token summary in every script of the fixtures (${languages.length} languages): 0 overflow outcomes`, async () => {
      const outcomes: Record<string, string> = {};
      for (const key of languages) {
        const text = longText(key);
        const long: Summariser = {
          provider: 'test',
          model: `long-${key}`,
          summarise: async () => ({ text, promptTokens: 50, completionTokens: 96, cacheReadTokens: null }),
        };
        const ids = await newSession({ mode: 'per-turn', summaryMaxTokens: 96 });
        const first = await ask(ids, question(1));
        const result = await runSummaryJob(
          first.evs,
          summaryService(async () => long),
        );
        outcomes[key] = result.turn;
        const [row] = await turnRows(ids.sessionId);
        // Cut to the budget under the planning counter (uncalibrated here), a head of the summariser's text.
        expect(approx.countText(row.text)).toBeLessThanOrEqual(96);
        expect(approx.countText(text)).toBeGreaterThan(96);
        expect(text.startsWith(row.text)).toBe(true);
        expect(row.text.length).toBeGreaterThan(0);
      }
      expect(Object.values(outcomes).filter((o) => o !== 'stored')).toEqual([]);
      const calls = await db.dataSource.query(
        `SELECT count(*)::int AS n FROM summary_calls WHERE outcome = 'overflow'`,
      );
      expect(calls).toEqual([{ n: 0 }]);
    });
  });

  describe('the provider summariser (the project model through the same adapter)', () => {
    it('stores the provider text and records the call as its own usage row', async () => {
      const ids = await newSession({ mode: 'per-turn', summaryMaxTokens: 40 });
      const first = await ask(ids, question(1));
      const before = upstream.requests.length;
      expect(await runSummaryJob(first.evs)).toEqual({ turn: 'stored', session: 'skipped' });
      const call = upstream.requests.slice(before).find((r) => r.route === 'openai.chat');
      const body = call?.body as {
        model: string;
        max_tokens?: number;
        max_completion_tokens?: number;
        messages: Array<{ role: string; content: string }>;
      };
      expect(body.model).toBe(`memory-gw-${models}`);
      expect(body.messages[0].content).toContain('Keep every name, number');
      expect(body.messages[1].content).toBe(`Q:\n${question(1).trim()}\n\nA:\n${FAKE_ANSWER}`);
      expect(
        (await turnRows(ids.sessionId)).map((r: { text: string; provider: string; model: string }) => [
          r.text,
          r.provider,
          r.model,
        ]),
      ).toEqual([[FAKE_ANSWER, 'openai', `memory-gw-${models}`]]);
      const [row] = await summaries.calls(ids.projectId);
      expect(row).toMatchObject({
        kind: 'turn',
        provider: 'openai',
        model: `memory-gw-${models}`,
        outcome: 'stored',
        promptTokens: call?.promptTokens,
      });
      // The fake counts an unknown model's tokens with o200k_base.
      expect(row.completionTokens).toBe(new TiktokenCounter('o200k_base').countText(FAKE_ANSWER));
      // The same call is a row of the project's call ledger, purpose summary.
      const ledger = await db.dataSource.query(
        `SELECT purpose, operation, provider, requested_model, input_tokens, output_tokens, error_code FROM provider_calls WHERE project_id = $1`,
        [ids.projectId],
      );
      expect(ledger.filter((r: { purpose: string }) => r.purpose === 'summary')).toEqual([
        {
          purpose: 'summary',
          operation: 'chat',
          provider: 'openai',
          requested_model: `memory-gw-${models}`,
          input_tokens: call?.promptTokens,
          output_tokens: row.completionTokens,
          error_code: null,
        },
      ]);
    });

    it('a provider error (HTTP 500) stores nothing and records the failed call', async () => {
      const ids = await newSession({ mode: 'per-turn', summaryMaxTokens: 40 });
      const first = await ask(ids, question(1));
      upstream.setFault('500', 5);
      try {
        // Retried within streamWithRetry's bounds (3 attempts), then given up: no retry loop.
        expect(await runSummaryJob(first.evs, summaryService(undefined, 20_000))).toEqual({
          turn: 'failed',
          session: 'skipped',
        });
      } finally {
        upstream.clearFaults();
      }
      expect(await turnRows(ids.sessionId)).toEqual([]);
      expect((await summaries.calls(ids.projectId)).map((c) => [c.outcome, c.promptTokens])).toEqual([
        ['failed', null],
      ]);
    });
  });
});
