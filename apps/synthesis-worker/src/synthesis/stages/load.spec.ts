import { randomUUID } from 'node:crypto';
import type { RunClaim } from '@ask/event-stream';
import { createSynthesisHarness, type SynthesisHarness } from '../../testing/synthesis-harness';
import { loadTurn } from './load';

// Integration: the load stage on a throwaway database (the harness), with the local stand-in.
describe(loadTurn.name, () => {
  jest.setTimeout(60_000);
  let harness: SynthesisHarness;
  beforeAll(async () => {
    harness = await createSynthesisHarness({ name: 'load-stage' });
  });
  afterAll(() => harness.close());

  const run = { claim: { askId: 'x', run: 1 } as unknown as RunClaim };
  async function session(llm: Parameters<SynthesisHarness['projects']['create']>[0]['llmSettings']) {
    const project = await harness.projects.create({ name: 'p', llmSettings: llm, maxHistoryMessages: 6 });
    const sessionId = (await harness.sessions.create(project.id, 's')).id;
    return { projectId: project.id, sessionId };
  }
  const data = (ids: { projectId: string; sessionId: string }, askId = randomUUID()) => ({
    ...ids,
    askId,
    question: 'What does HNSW build?',
    acceptedAt: new Date().toISOString(),
    items: [],
  });

  it('loads the model, its window and counter, max_tokens and the counted pairs, oldest first', async () => {
    const ids = await session({ provider: 'local', model: 'local', maxTokens: 512 });
    for (const q of ['First?', 'Second?'])
      await harness.sessions.appendMessage({ ...ids, askId: randomUUID(), question: q, answer: 'An answer.' });
    const turn = await loadTurn(harness.deps(), data(ids), run);
    if (turn === 'answered') throw new Error('not answered yet');
    expect([turn.model.provider, turn.model.model, turn.maxTokens, turn.choice.exactPlan]).toEqual([
      'local',
      'local',
      512,
      true,
    ]);
    expect(turn.history.map((h) => h.message.question)).toEqual(['First?', 'Second?']);
    expect(turn.planInput).toMatchObject({ maxTokens: 512, maxHistoryMessages: 6, question: 'What does HNSW build?' });
    expect(turn.remembered).toBeUndefined();
    expect(turn.memory).toBeUndefined();
    // An exact counter: no calibrated margin to carry.
    expect(turn.lowestMargin).toBeUndefined();
  });

  it('carries the lowest safety margin of a per-script estimate, computed once for every check', async () => {
    const ids = await session({
      provider: 'openai',
      model: 'load-estimated',
      baseUrl: `${harness.upstream.url}/v1`,
      contextWindow: 8192,
    });
    const turn = await loadTurn(harness.deps(), data(ids), run);
    if (turn === 'answered') throw new Error('not answered yet');
    // No evidence yet: the seed's 15%.
    expect([turn.choice.exactPlan, turn.lowestMargin]).toEqual([false, 15]);
  });

  it('says `answered` when the session already holds the ask’s pair', async () => {
    const ids = await session({ provider: 'local', model: 'local' });
    const askId = randomUUID();
    await harness.sessions.appendMessage({ ...ids, askId, question: 'Q?', answer: 'A.' });
    expect(await loadTurn(harness.deps(), data(ids, askId), run)).toBe('answered');
  });

  it('ends with a 404 for a deleted session and a 412 for a project without LLM settings', async () => {
    const ids = await session({ provider: 'local', model: 'local' });
    await expect(loadTurn(harness.deps(), data({ ...ids, sessionId: randomUUID() }), run)).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
    });
    const bare = await harness.projects.create({ name: 'no-llm' });
    const sessionId = (await harness.sessions.create(bare.id, 's')).id;
    await expect(loadTurn(harness.deps(), data({ projectId: bare.id, sessionId }), run)).rejects.toMatchObject({
      status: 412,
      code: 'llm_not_configured',
    });
  });

  it('plans against a window the provider disclosed earlier, and says so', async () => {
    const ids = await session({ provider: 'openai', model: 'gpt-4o', baseUrl: `${harness.upstream.url}/v1` });
    await harness.windows.remember(ids.projectId, 'openai', 'gpt-4o', 16_000);
    const turn = await loadTurn(harness.deps(), data(ids), run);
    if (turn === 'answered') throw new Error('not answered yet');
    expect([turn.model.window, turn.remembered]).toEqual([16_000, 16_000]);
  });
});
