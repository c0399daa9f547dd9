import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { type MemorySettings, type RetrievedItem, type SummariseJobData } from '@ask/ask-contracts';
import { extractiveSummary } from '@ask/context-budget';
import { AskEventStream } from '@ask/event-stream';
import { type FakeUpstream } from '@ask/fake-upstream';
import type { LlmSettings } from '@ask/llm-providers';
import { ProjectsRepository, SessionsRepository, SummariesRepository } from '@ask/persistence';
import { type TestDatabase } from '@ask/persistence/testing';
import { TiktokenCounter } from '@ask/token-counting';
import type { SynthesisService } from '../synthesis/synthesis.service';
import { createSynthesisHarness, type SynthesisHarness } from '../testing/synthesis-harness';
import { QUESTION_BONUS, SummaryService } from './summary.service';

// Integration (issue 19): the synthesis service wired as the worker's module wires it (summary
// producer and summary service both given), on a throwaway PostgreSQL database, the machine's Redis
// (own key prefix, a real BullMQ queue) and the fake OpenAI upstream on loopback. A pair whose
// summariser is the built-in extractive one is summarised in the ask's own run, after `done`, with
// no `ask-memory` job; a provider summariser still goes through the queue.
describe('SynthesisService: the summary after done', () => {
  jest.setTimeout(120_000);
  const encryptionKey = 'c'.repeat(64);
  let harness: SynthesisHarness;
  let db: TestDatabase;
  let upstream: FakeUpstream;
  let events: AskEventStream;
  let projects: ProjectsRepository;
  let sessions: SessionsRepository;
  let summaries: SummariesRepository;
  let queue: Queue;
  let synthesis: SynthesisService;
  let service: SummaryService;

  beforeAll(async () => {
    harness = await createSynthesisHarness({
      name: 'inline-summary-test',
      encryptionKey,
      memory: 'inline',
      ledger: true,
    });
    ({ db, upstream, events, projects, sessions, summaries, synthesis, summaryService: service } = harness);
    queue = harness.queue!;
  });

  afterAll(() => harness.close());

  const o200k = new TiktokenCounter('o200k_base');
  const question = `Codename Nightjar-101. ${Array.from({ length: 30 }, (_, k) => `Filler sentence ${String.fromCharCode(97 + (k % 26))} only fills the window.`).join(' ')} How do I build an HNSW index?`;
  const item: RetrievedItem = {
    id: randomUUID(),
    kind: 'knowledge',
    title: 'pgvector README',
    text: 'Add an HNSW index for each distance function you want to use. HNSW builds a multilayer graph. It has better query performance than IVFFlat.',
    score: 0.8,
    source: 'README.md',
  };

  async function newSession(llmSettings: LlmSettings, memory: MemorySettings | null) {
    const project = await projects.create({ name: 'inline', llmSettings, memorySettings: memory });
    await projects.setCredentials(project.id, { apiKey: `sk-test-${randomUUID()}` });
    return { projectId: project.id, sessionId: (await sessions.create(project.id, 's')).id };
  }
  const local: LlmSettings = { provider: 'local', model: 'local' };
  const openai = (): LlmSettings => ({
    provider: 'openai',
    model: `inline-${randomUUID().slice(0, 8)}`,
    baseUrl: `${upstream.url}/v1`,
    contextWindow: 8000,
    maxTokens: 512,
  });

  async function ask(ids: { projectId: string; sessionId: string }) {
    const askId = randomUUID();
    const acceptedAt = new Date().toISOString();
    await events.open(askId, { ...ids, acceptedAt });
    await synthesis.synthesize({ askId, ...ids, question, acceptedAt, items: [item] }, { attempt: 1 });
    const evs = await events.readAll(askId);
    const done = evs.find((e) => e.type === 'done')?.data as { messageId: string };
    const [pair] = (await sessions.history(ids.sessionId)).filter((m) => m.askId === askId);
    return { askId, types: evs.map((e) => e.type), messageId: done.messageId, answer: pair.answer };
  }

  const turnRows = (sessionId: string) =>
    db.dataSource.query(
      'SELECT message_id, text, token_counts, provider, model FROM turn_summaries WHERE session_id = $1',
      [sessionId],
    );
  const memoryJobs = async () => {
    const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'completed', 'failed', 'prioritized');
    return Object.values(counts).reduce((a, b) => a + b, 0);
  };

  it('a local-provider ask leaves its summary row when it returns, and no ask-memory job', async () => {
    const ids = await newSession(local, { mode: 'per-turn', summaryMaxTokens: 40 });
    const jobsBefore = await memoryJobs();
    const first = await ask(ids);
    expect(first.types.at(-1)).toBe('done');
    expect(await queue.getJob(`summary-${first.messageId}`)).toBeUndefined();
    expect(await memoryJobs()).toBe(jobsBefore);
    const expected = extractiveSummary(
      [
        { label: 'Q', text: question, bonus: QUESTION_BONUS },
        { label: 'A', text: first.answer },
      ],
      40,
      (t) => o200k.countText(t),
    );
    expect(expected).toContain('Nightjar-101');
    expect(await turnRows(ids.sessionId)).toEqual([
      {
        message_id: first.messageId,
        text: expected,
        token_counts: { [o200k.id]: o200k.countText(expected) },
        provider: 'local',
        model: 'extractive',
      },
    ]);
    expect((await summaries.calls(ids.projectId)).map((c) => [c.kind, c.model, c.outcome, c.promptTokens])).toEqual([
      ['turn', 'extractive', 'stored', 0],
    ]);
    // The next ask plans with it: the first pair summarised or verbatim, never dropped.
    await ask(ids);
    expect(await turnRows(ids.sessionId)).toHaveLength(2);
    expect(await memoryJobs()).toBe(jobsBefore);
  });

  it('an upstream project whose summaryModel is extractive is summarised inline, with no upstream call for it', async () => {
    const ids = await newSession(openai(), { mode: 'per-turn', summaryModel: 'extractive', summaryMaxTokens: 40 });
    const before = upstream.requests.length;
    const first = await ask(ids);
    expect(upstream.requests.slice(before).map((r) => r.route)).toEqual(['openai.chat']);
    expect(await queue.getJob(`summary-${first.messageId}`)).toBeUndefined();
    expect((await turnRows(ids.sessionId)).map((r: { message_id: string }) => r.message_id)).toEqual([first.messageId]);
  });

  it('a provider summariser still goes through the queue', async () => {
    const ids = await newSession(openai(), { mode: 'per-turn', summaryMaxTokens: 40 });
    const first = await ask(ids);
    expect(await turnRows(ids.sessionId)).toEqual([]);
    const job = await queue.getJob(`summary-${first.messageId}`);
    expect(job?.name).toBe('summarize');
    expect(job?.data).toEqual({
      projectId: ids.projectId,
      sessionId: ids.sessionId,
      messageId: first.messageId,
      askId: first.askId,
      evictedUpTo: null,
    });
    await job?.remove();
    const before = upstream.requests.length;
    expect(await service.summarise(job?.data as SummariseJobData)).toEqual({ turn: 'stored', session: 'skipped' });
    expect(upstream.requests.slice(before).map((r) => r.route)).toEqual(['openai.chat']);
    expect(await turnRows(ids.sessionId)).toHaveLength(1);
  });

  it('an inline run that hits a database error leaves the job instead, and the job stores the summary', async () => {
    const ids = await newSession(local, { mode: 'per-turn', summaryMaxTokens: 40 });
    // A real database error on the summary's write (the reads before it still work).
    await db.dataSource.query(
      `CREATE FUNCTION refuse_summary() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$`,
    );
    await db.dataSource.query(
      'CREATE TRIGGER refuse_summary BEFORE INSERT ON turn_summaries FOR EACH ROW EXECUTE FUNCTION refuse_summary()',
    );
    let first: Awaited<ReturnType<typeof ask>>;
    try {
      first = await ask(ids);
    } finally {
      await db.dataSource.query('DROP TRIGGER refuse_summary ON turn_summaries');
      await db.dataSource.query('DROP FUNCTION refuse_summary');
    }
    expect(first.types.at(-1)).toBe('done');
    expect(await turnRows(ids.sessionId)).toEqual([]);
    const job = await queue.getJob(`summary-${first.messageId}`);
    expect(job?.data).toMatchObject({ messageId: first.messageId, askId: first.askId });
    await job?.remove();
    expect(await service.summarise(job?.data as SummariseJobData)).toEqual({ turn: 'stored', session: 'skipped' });
    expect(await turnRows(ids.sessionId)).toHaveLength(1);
    // The failed inline write recorded no call: the job's is the only one.
    expect((await summaries.calls(ids.projectId)).map((c) => c.outcome)).toEqual(['stored']);
  });
});
