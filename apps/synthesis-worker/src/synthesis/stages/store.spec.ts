import { FencedPublishError } from '@ask/event-stream';
import { createSynthesisHarness, type SynthesisHarness } from '../../testing/synthesis-harness';
import { loadedTurn } from '../../testing/stage-turn';
import { publishBudget } from './budget';
import { firstPlan } from './plan';
import { storeAnswer } from './store';

// Integration: the store stage on the harness: the pair in PostgreSQL, the events in Redis.
describe(storeAnswer.name, () => {
  jest.setTimeout(60_000);
  let harness: SynthesisHarness;
  beforeAll(async () => {
    harness = await createSynthesisHarness({ name: 'store-stage' });
  });
  afterAll(() => harness.close());

  const local = { provider: 'local' as const, model: 'local', maxTokens: 512 };
  const result = (text: string) => ({ text, promptTokens: 120, completionTokens: 7 });
  /** A loaded turn, its plan and the `budget` published for it. */
  async function planned() {
    const loaded = await loadedTurn(harness, local);
    const { sized } = firstPlan(loaded.turn.planInput);
    const budget = await publishBudget(harness.events, loaded.turn, sized);
    return { ...loaded, sized, budget };
  }
  const types = async (askId: string) => (await harness.events.readAll(askId)).map((e) => e.type);

  it('stores the pair once with its counts, usage, budget and sources (one per page)', async () => {
    const { turn, deps, sized, budget } = await planned();
    const { stored, sources } = await storeAnswer(deps, turn, { sized, budget, result: result('A graph.') });
    expect(stored.inserted).toBe(true);
    expect(sources).toEqual([{ id: 'k1', kind: 'knowledge', title: 'HNSW' }]);
    const row = await harness.sessions.findByAsk(turn.project.id, turn.data.askId);
    expect({
      question: row?.question,
      answer: row?.answer,
      promptTokens: row?.promptTokens,
      completionTokens: row?.completionTokens,
      provider: row?.provider,
      model: row?.model,
      sources: row?.sources,
      tokenCounts: row?.tokenCounts,
    }).toEqual({
      question: 'What does HNSW build?',
      answer: 'A graph.',
      promptTokens: 120,
      completionTokens: 7,
      provider: 'local',
      model: 'local',
      sources: [{ id: 'k1', kind: 'knowledge', title: 'HNSW' }],
      // Counted under the planning counter (o200k_base for the local stand-in), kept for later plans.
      tokenCounts: { 'tiktoken:o200k_base': { question: 7, answer: 3 } },
    });
    // What the live view showed for the turn, kept for a reopened session.
    expect(row?.budget).toEqual(budget);
    expect(await types(turn.data.askId)).toEqual(['budget']);
  });

  it('resends the stored answer (`reset`, `delta`) when another run stored its answer first', async () => {
    const { turn, deps, sized, budget } = await planned();
    await harness.sessions.appendMessage({
      projectId: turn.project.id,
      sessionId: turn.data.sessionId,
      askId: turn.data.askId,
      question: turn.data.question,
      answer: 'The stored answer.',
    });
    const { stored } = await storeAnswer(deps, turn, { sized, budget, result: result('Another answer.') });
    expect([stored.inserted, stored.message.answer]).toEqual([false, 'The stored answer.']);
    const events = (await harness.events.readAll(turn.data.askId)).map((e) => [e.type, e.data]);
    expect(events.slice(1)).toEqual([
      ['reset', { attempt: turn.run.claim.run, reason: 'another run stored its answer first; resending it' }],
      ['delta', { text: 'The stored answer.' }],
    ]);
  });

  it('stores nothing for a run that is no longer current', async () => {
    const { turn, deps, sized, budget } = await planned();
    await harness.events.claim(turn.data.askId);
    await expect(storeAnswer(deps, turn, { sized, budget, result: result('Late.') })).rejects.toBeInstanceOf(
      FencedPublishError,
    );
    expect(await harness.sessions.findByAsk(turn.project.id, turn.data.askId)).toBeNull();
  });

  it('ends with a 404 when the session was deleted meanwhile', async () => {
    const { turn, deps, sized, budget } = await planned();
    await harness.sessions.delete(turn.project.id, turn.data.sessionId);
    await expect(storeAnswer(deps, turn, { sized, budget, result: result('Gone.') })).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
      details: `session ${turn.data.sessionId} was deleted while the ask was running`,
    });
  });
});
