import { randomBytes } from 'node:crypto';
import { FAKE_ANSWER, FAKE_ANSWER_CHUNKS } from '@ask/fake-upstream';
import { createSynthesisHarness, type SynthesisHarness } from '../../testing/synthesis-harness';
import { loadedTurn } from '../../testing/stage-turn';
import { firstPlan } from './plan';
import { recoverFromOverflow, streamAnswer } from './stream';
import type { Overflow } from './turn';

// Integration: the stream stage and its overflow branch on the harness, against the fake upstream's
// OpenAI wire; deltas uncoalesced (SYNTHESIS_DELTA_INTERVAL_MS=0), so each chunk is one event.
describe('stream stage', () => {
  jest.setTimeout(60_000);
  let harness: SynthesisHarness;
  beforeAll(async () => {
    harness = await createSynthesisHarness({
      name: 'stream-stage',
      encryptionKey: randomBytes(32).toString('hex'),
      env: { SYNTHESIS_DELTA_INTERVAL_MS: '0' },
    });
  });
  afterAll(() => harness.close());
  afterEach(() => harness.upstream.clearFaults());

  const openai = () => ({
    provider: 'openai' as const,
    model: 'gpt-4o',
    baseUrl: `${harness.upstream.url}/v1`,
    contextWindow: 8192,
    maxTokens: 1024,
  });
  // The Anthropic wire discloses an overflow's figures (the fake's `overflow` fault).
  const anthropic = () => ({
    provider: 'anthropic' as const,
    model: 'claude-sonnet-4-6',
    baseUrl: harness.upstream.url,
    maxTokens: 1024,
  });
  const signal = () => new AbortController().signal;
  const events = async (askId: string) => (await harness.events.readAll(askId)).map((e) => [e.type, e.data]);
  const rows = async (askId: string) =>
    (await harness.calls.forAsk(askId)).map((c) => [c.operation, c.purpose, c.plannedTokens, c.errorCode]);
  const deltas = FAKE_ANSWER_CHUNKS.map((text) => ['delta', { text }]);

  describe(streamAnswer.name, () => {
    it('publishes the answer as deltas and returns its text and usage, one chat row', async () => {
      const { turn, deps, call } = await loadedTurn(harness, openai(), { ledger: true });
      const { sized } = firstPlan(turn.planInput);
      const result = await streamAnswer(deps, turn, sized, signal(), call('answer'));
      // The usage the fake reported: its own count of the prompt and of the answer.
      expect(result).toEqual({ text: FAKE_ANSWER, promptTokens: 94, completionTokens: 16 });
      expect(await events(turn.data.askId)).toEqual(deltas);
      expect(await rows(turn.data.askId)).toEqual([['chat', 'answer', sized.plan.used, null]]);
    });

    it('hands back the overflow when the provider refused before any text, its row a context_overflow', async () => {
      const { turn, deps, call } = await loadedTurn(harness, anthropic(), { ledger: true });
      const { sized } = firstPlan(turn.planInput);
      harness.upstream.setFault({ kind: 'overflow', promptTokens: 9000, window: 4096 }, 1);
      const result = await streamAnswer(deps, turn, sized, signal(), call('answer'));
      expect(result).toEqual({
        text: '',
        promptTokens: null,
        completionTokens: null,
        overflow: {
          kind: 'overflow',
          limit: 4096,
          actual: 9000,
          promptTokens: 9000,
          message: 'prompt is too long: 9000 tokens > 4096 maximum',
        },
      });
      expect(await events(turn.data.askId)).toEqual([]);
      expect(await rows(turn.data.askId)).toEqual([['chat', 'answer', sized.plan.used, 'context_overflow']]);
    });
  });

  describe(recoverFromOverflow.name, () => {
    /** A turn whose first answer call was refused with `overflow` (one fault), and what the branch needs. */
    async function refusedOnce(ratio: number, faults = 1) {
      const loaded = await loadedTurn(harness, anthropic(), { ledger: true });
      const { sized } = firstPlan(loaded.turn.planInput);
      // The provider counts `ratio` times our plan, in a 4,096-token window.
      const promptTokens = Math.round(sized.plan.used * ratio);
      harness.upstream.setFault({ kind: 'overflow', promptTokens, window: 4096 }, faults);
      const first = await streamAnswer(loaded.deps, loaded.turn, sized, signal(), loaded.call('answer'));
      return { ...loaded, sized, overflow: first.overflow as Overflow };
    }

    it('learns the window, re-plans at it, publishes the new budget and answers once more (overflow_retry)', async () => {
      const { turn, deps, call, sized, overflow } = await refusedOnce(2);
      const refused = { sized, overflow, bare: false, replanned: false };
      const answered = await recoverFromOverflow(deps, turn, refused, signal(), call);
      expect([answered.sized.window, answered.budget.window, answered.result.text]).toEqual([4096, 4096, FAKE_ANSWER]);
      expect(await events(turn.data.askId)).toEqual([['budget', answered.budget], ...deltas]);
      // The refused call planned 122 tokens; the retry, scaled by the observed ratio 2, plans 220.
      expect(await rows(turn.data.askId)).toEqual([
        ['chat', 'answer', 122, 'context_overflow'],
        ['chat', 'overflow_retry', 220, null],
      ]);
      expect((await harness.windows.find(turn.project.id, 'anthropic', 'claude-sonnet-4-6'))?.window).toBe(4096);
    });

    it('ends with the 413 naming the question’s size when the bare request was refused, with no second call', async () => {
      const { turn, deps, call, sized, overflow } = await refusedOnce(2);
      const before = harness.upstream.requests.length;
      await expect(
        recoverFromOverflow(deps, turn, { sized, overflow, bare: true, replanned: false }, signal(), call),
      ).rejects.toMatchObject({
        status: 413,
        code: 'context_overflow',
        details: 'model=claude-sonnet-4-6 window=200000 maxTokens=1024 question=12 prompt=244',
      });
      expect(harness.upstream.requests.length).toBe(before);
    });

    it('ends with the 413 of the figures when the plan was already re-planned once, with no second call', async () => {
      const { turn, deps, call, sized, overflow } = await refusedOnce(2);
      const before = harness.upstream.requests.length;
      await expect(
        recoverFromOverflow(deps, turn, { sized, overflow, bare: false, replanned: true }, signal(), call),
      ).rejects.toMatchObject({
        status: 413,
        code: 'context_overflow',
        details: 'model=claude-sonnet-4-6 window=200000 question=6 rag=0 knowledge=33',
      });
      expect(harness.upstream.requests.length).toBe(before);
    });

    it('ends with the 413 of the re-plan when the retry is refused too, both refusals a row', async () => {
      const { turn, deps, call, sized, overflow } = await refusedOnce(2, 2);
      await expect(
        recoverFromOverflow(deps, turn, { sized, overflow, bare: false, replanned: false }, signal(), call),
      ).rejects.toMatchObject({
        status: 413,
        code: 'context_overflow',
        details: 'model=claude-sonnet-4-6 window=4096 question=12 rag=0 knowledge=66',
      });
      expect((await events(turn.data.askId)).map(([type]) => type)).toEqual(['budget']);
      expect(await rows(turn.data.askId)).toEqual([
        ['chat', 'answer', 122, 'context_overflow'],
        ['chat', 'overflow_retry', 220, 'context_overflow'],
      ]);
    });
  });
});
