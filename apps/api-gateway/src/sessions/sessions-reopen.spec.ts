import { randomUUID } from 'node:crypto';
import type { BudgetEvent } from '@ask/ask-contracts';
import { type Harness, startGateway } from '../security/gateway-harness';

// The real gateway on a throwaway database: a reopened session shows each turn's stored budget and sources.
describe('GET /api/v1/projects/:projectId/sessions/:sessionId (a reopened session)', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startGateway();
  }, 60_000);
  afterAll(() => h?.close());

  it("returns each message's budget (turns verbatim / summarised / under the session summary / dropped, items left out for relevance) and sources as stored with the answer", async () => {
    const project = await h.projects.create({ name: 'reopen', llmSettings: { provider: 'local', model: 'local' } });
    const session = await h.sessions.create(project.id, 's');
    const budget: BudgetEvent = {
      provider: 'local',
      model: 'local',
      window: 8192,
      maxTokens: 2048,
      reserve: 64,
      margin: 410,
      counter: 'exact',
      counterId: 'o200k_base',
      calibration: 1,
      calibrationByScript: {},
      available: 5670,
      used: 1234,
      turnsKept: 1,
      turnsDropped: 2,
      contextKept: 1,
      contextDropped: 0,
      keptTurnIds: ['m1'],
      // What memory and relevance decided, as the dashboard draws it: turns by form, items by reason.
      items: [
        { id: 'k1', kind: 'knowledge', score: 0.41, tokens: 315, kept: true, reason: 'floor' },
        { id: 'k2', kind: 'knowledge', score: 0.22, tokens: 320, kept: true, reason: 'relevant' },
        { id: 'k3', kind: 'knowledge', score: 0.02, tokens: 300, kept: false, reason: 'below-floor' },
      ],
      relevanceFloor: 0.04,
      memory: {
        mode: 'per-turn',
        verbatimPairs: 1,
        summarisedPairs: 8,
        compactedPairs: 20,
        droppedPairs: 1,
        verbatim: [[30, 30]],
        summarised: [[22, 29]],
        compacted: [[1, 20]],
        dropped: [[21, 21]],
        sessionSummary: true,
        sessionSummaryTokens: 412,
        memoryTokens: 771,
      },
    };
    const sources = [{ kind: 'knowledge', id: 'k1', title: 'HNSW', source: 'docs/hnsw.md' }];
    await h.sessions.appendMessage({
      projectId: project.id,
      sessionId: session.id,
      askId: randomUUID(),
      question: 'old?',
      answer: 'old.',
    });
    await h.sessions.appendMessage({
      projectId: project.id,
      sessionId: session.id,
      askId: randomUUID(),
      question: 'q?',
      answer: 'a.',
      budget,
      sources,
    });
    const reply = await h.call('GET', `/api/v1/projects/${project.id}/sessions/${session.id}`, { key: h.adminKey });
    expect(reply.status).toBe(200);
    const messages = reply.body?.['messages'] as Array<{ question: string; budget: unknown; sources: unknown }>;
    expect(messages.map((m) => [m.question, m.budget, m.sources])).toEqual([
      ['old?', null, []],
      ['q?', budget, sources],
    ]);
  });
});
