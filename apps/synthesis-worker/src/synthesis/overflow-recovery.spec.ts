import { randomBytes, randomUUID } from 'node:crypto';
import type { AskEvent, BudgetEvent, RetrievedItem } from '@ask/ask-contracts';
import { AskEventStream } from '@ask/event-stream';
import { type FakeUpstream } from '@ask/fake-upstream';
import { LearnedWindowsRepository, ProjectsRepository, SessionsRepository, UsageRepository } from '@ask/persistence';
import { createSynthesisHarness, type SynthesisHarness } from '../testing/synthesis-harness';

// Integration: the real SynthesisService on a throwaway PostgreSQL database, the machine's Redis (own
// key prefix) and the fake upstream on loopback, with the OpenAI wire counting denser than our
// estimate or enforcing windows smaller than the project's (issue 12 items 2 and 3).
describe('overflow recovery and count-endpoint failures (SynthesisService against the fake upstream)', () => {
  jest.setTimeout(60_000);
  let harness: SynthesisHarness;
  let upstream: FakeUpstream;
  let events: AskEventStream;
  let projects: ProjectsRepository;
  let sessions: SessionsRepository;
  let usage: UsageRepository;
  let windows: LearnedWindowsRepository;
  /** A service whose asks end after `deadlineMs` (`ASK_DEADLINE_MS`). */
  const service = (deadlineMs = 120_000) => harness.service({ env: { ASK_DEADLINE_MS: String(deadlineMs) } });

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
    // `dense-gw` counts 2.5× o200k_base (denser than any tokenizer our estimate knows) in an 8,192
    // window; `small-gw` is served with a 16,000-token window although the project says 64,000.
    harness = await createSynthesisHarness({
      name: 'overflow-test',
      upstream: { chunkDelayMs: 0, enforce: { promptScale: 2.5, windows: { 'dense-gw': 8192, 'small-gw': 16_000 } } },
      encryptionKey: randomBytes(32).toString('hex'),
    });
    ({ upstream, events, projects, sessions, usage, windows } = harness);
  });

  afterAll(() => harness.close());

  async function newProject(
    llm: NonNullable<Parameters<ProjectsRepository['create']>[0]['llmSettings']>,
    turns = 0,
    apiKey?: string,
    credentials?: Parameters<ProjectsRepository['setCredentials']>[1],
  ) {
    const project = await projects.create({
      name: 'p',
      llmSettings: llm,
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
    });
    if (apiKey || credentials) await projects.setCredentials(project.id, credentials ?? { apiKey });
    const session = await sessions.create(project.id, 's');
    const answer = 'The planner keeps the newest pairs that fit and drops the oldest ones first. '.repeat(60).trim();
    for (let i = 0; i < turns; i += 1) {
      await sessions.appendMessage({
        projectId: project.id,
        sessionId: session.id,
        askId: randomUUID(),
        question: `Earlier question ${i}?`,
        answer,
      });
    }
    return { projectId: project.id, sessionId: session.id };
  }

  async function ask(ids: { projectId: string; sessionId: string }, question: string, svc = service()) {
    const askId = randomUUID();
    const acceptedAt = new Date().toISOString();
    await events.open(askId, { ...ids, acceptedAt });
    await svc.synthesize({ askId, ...ids, question, acceptedAt, items }, { attempt: 1 });
    return { askId, events: await events.readAll(askId) };
  }

  const budgetOf = (evs: AskEvent[]) => evs.filter((e) => e.type === 'budget').map((e) => e.data as BudgetEvent);
  const chatsSince = (n: number) =>
    upstream.requests
      .slice(n)
      .filter(
        (r) => r.route.endsWith('chat') || r.route === 'anthropic.messages' || r.route === 'vertex.gemini.stream',
      );
  const countsSince = (n: number) =>
    upstream.requests.slice(n).filter((r) => r.route.endsWith('count_tokens') || r.route.endsWith('.count'));

  describe('an overflow that discloses the prompt size', () => {
    it('re-plans with the observed ratio (disclosed ÷ planned) so the one retry fits, and records the disclosure for calibration', async () => {
      const ids = await newProject(
        { provider: 'openai', model: 'dense-gw', baseUrl: `${upstream.url}/v1`, contextWindow: 8192, maxTokens: 1024 },
        12,
      );
      const before = upstream.requests.length;
      const { events: evs } = await ask(ids, 'What does the planner keep?');
      const chats = chatsSince(before);
      expect(chats).toHaveLength(2);
      const [first, second] = budgetOf(evs);
      const disclosed = chats[0].promptTokens as number;
      expect(disclosed + 1024).toBeGreaterThan(8192);
      expect(second.observedRatio).toBe(Number((disclosed / first.used).toFixed(4)));
      expect([first.window, second.window]).toEqual([8192, 8192]);
      // The retry fitted the provider's own count, with the prompt planned in its tokens.
      expect((chats[1].promptTokens as number) + 1024).toBeLessThanOrEqual(8192);
      expect(evs.at(-1)?.type).toBe('done');
      const records = await usage.recent('dense-gw', 5);
      expect(records.map((r) => [r.source, r.script, r.reported])).toEqual([
        ['usage', 'latin', chats[1].promptTokens],
        ['overflow', 'latin', disclosed],
      ]);

      // The next ask of the same project, in another session, plans with what its overflow taught: no second overflow.
      const session2 = (await sessions.create(ids.projectId, 's2')).id;
      const again = upstream.requests.length;
      const later = await ask({ projectId: ids.projectId, sessionId: session2 }, 'And which pairs does it drop?');
      expect(chatsSince(again)).toHaveLength(1);
      const [plan] = budgetOf(later.events);
      // One class: its factor is the largest (reported − framing) ÷ floor of its records.
      const perFloor = records.map((r) => {
        const floor = (r.masses as Record<string, [number, number]>)['latin'][0];
        return (r.reported - (r.estimated - floor)) / floor;
      });
      expect(plan.calibrationByScript).toEqual({ latin: Number(Math.max(...perFloor).toFixed(4)) });
      expect(later.events.at(-1)?.type).toBe('done');

      // Another project on the same model id has no evidence of its own: it keeps its own (empty)
      // calibration, and the model-wide prior, larger than the estimate here, still spares it the overflow.
      const other = await newProject(
        { provider: 'openai', model: 'dense-gw', baseUrl: `${upstream.url}/v1`, contextWindow: 8192, maxTokens: 1024 },
        12,
      );
      const third = upstream.requests.length;
      const elsewhere = await ask(other, 'And which pairs does it drop?');
      expect(chatsSince(third)).toHaveLength(1);
      expect(budgetOf(elsewhere.events)[0].calibrationByScript).toEqual({});
      expect(elsewhere.events.at(-1)?.type).toBe('done');
    });
  });

  describe('a window the provider disclosed', () => {
    it('is remembered per project and model, shown in the budget event and used by later plans', async () => {
      const ids = await newProject(
        { provider: 'openai', model: 'small-gw', baseUrl: `${upstream.url}/v1`, contextWindow: 64_000 },
        40,
      );
      let before = upstream.requests.length;
      const first = await ask(ids, 'What does the planner keep?');
      expect(budgetOf(first.events).map((b) => b.window)).toEqual([64_000, 16_000]);
      expect(chatsSince(before)).toHaveLength(2);
      expect((await windows.list(ids.projectId)).map((w) => [w.provider, w.model, w.window])).toEqual([
        ['openai', 'small-gw', 16_000],
      ]);
      before = upstream.requests.length;
      const second = await ask(ids, 'And which pairs does it drop?');
      expect(budgetOf(second.events).map((b) => [b.window, b.rememberedWindow])).toEqual([[16_000, 16_000]]);
      expect(chatsSince(before)).toHaveLength(1);
      expect(second.events.at(-1)?.type).toBe('done');
    });
  });

  // Anthropic `count_tokens` and Vertex Gemini `:countTokens`: the exact counts that earn the 5% margin.
  describe.each([
    {
      endpoint: 'Anthropic count_tokens',
      model: 'claude-sonnet-4-6',
      window: 200_000,
      project: () =>
        newProject(
          { provider: 'anthropic', model: 'claude-sonnet-4-6', baseUrl: upstream.url },
          0,
          `sk-ant-test-${randomUUID()}`,
        ),
    },
    {
      endpoint: 'Vertex Gemini :countTokens',
      model: 'gemini-2.5-flash',
      window: 1_000_000,
      project: () =>
        newProject(
          {
            provider: 'vertex',
            model: 'gemini-2.5-flash',
            gcpProject: 'demo-project',
            region: 'us-central1',
            baseUrl: upstream.url,
          },
          0,
          undefined,
          { gcpAccessToken: `ya29.test-${randomUUID()}` },
        ),
    },
  ])('$endpoint failures, classified like chat failures', ({ model, window, project }) => {
    it('retries a 429 within bounds and then answers', async () => {
      const ids = await project();
      const before = upstream.requests.length;
      upstream.setFault({ kind: '429', retryAfterSeconds: 0, endpoint: 'count' }, 1);
      const { events: evs } = await ask(ids, 'What is an HNSW index?');
      expect(countsSince(before)).toHaveLength(2);
      expect(chatsSince(before)).toHaveLength(1);
      expect(evs.at(-1)?.type).toBe('done');
    });

    it('ends with one 502 after three 429s, with no chat call', async () => {
      const ids = await project();
      const before = upstream.requests.length;
      upstream.setFault({ kind: '429', retryAfterSeconds: 0, endpoint: 'count' }, 3);
      const { events: evs } = await ask(ids, 'What is an HNSW index?');
      expect(countsSince(before)).toHaveLength(3);
      expect(chatsSince(before)).toHaveLength(0);
      expect(evs.map((e) => e.type)).toEqual(['error']);
      expect(evs[0].data).toMatchObject({ status: 502, code: 'llm_upstream' });
    });

    it('takes an overflow to the 413 path with the figures', async () => {
      const ids = await project();
      const before = upstream.requests.length;
      upstream.setFault({ kind: 'overflow', endpoint: 'count', promptTokens: 9_000_000, window }, 1);
      const { events: evs } = await ask(ids, 'What is an HNSW index?');
      expect(chatsSince(before)).toHaveLength(0);
      expect(evs.map((e) => e.type)).toEqual(['error']);
      expect(evs[0].data).toMatchObject({ status: 413, code: 'context_overflow' });
      expect((evs[0].data as { details: string }).details).toMatch(new RegExp(`^model=${model} window=${window} `));
    });

    it('ends with one 504 when the count endpoint does not answer before the deadline', async () => {
      const ids = await project();
      const before = upstream.requests.length;
      upstream.setFault({ kind: 'stall', endpoint: 'count' }, 1);
      const { events: evs } = await ask(ids, 'What is an HNSW index?', service(1500));
      expect(countsSince(before)).toHaveLength(1);
      expect(chatsSince(before)).toHaveLength(0);
      expect(evs.map((e) => e.type)).toEqual(['error']);
      expect(evs[0].data).toMatchObject({ status: 504, code: 'llm_upstream' });
    });
  });
});
