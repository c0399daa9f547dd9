import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { createSynthesisHarness, type SynthesisHarness } from '../../testing/synthesis-harness';
import { claimRun, finishIfAlreadyStored, resetIfStreamed, resumeRun } from './claim';
import type { Run } from './turn';

// Integration: the claim and the re-run's resume on the harness: the ask's events in Redis, the stored pair in PostgreSQL.
describe('claim stage', () => {
  jest.setTimeout(60_000);
  let harness: SynthesisHarness;
  let ids: { projectId: string; sessionId: string };
  beforeAll(async () => {
    harness = await createSynthesisHarness({ name: 'claim-stage' });
    const project = await harness.projects.create({ name: 'p', llmSettings: { provider: 'local', model: 'local' } });
    ids = { projectId: project.id, sessionId: (await harness.sessions.create(project.id, 's')).id };
  });
  afterAll(() => harness.close());

  /** A new ask opened in Redis (no events yet) and claimed once. */
  async function claimed(): Promise<{ askId: string; run: Run }> {
    const askId = randomUUID();
    await harness.events.open(askId, { ...ids, acceptedAt: new Date().toISOString() });
    const claim = await harness.events.claim(askId);
    if (!claim) throw new Error('not claimed');
    return { askId, run: { claim } };
  }
  const data = (askId: string) => ({ askId, ...ids, question: 'Q?', acceptedAt: new Date().toISOString(), items: [] });
  const events = async (askId: string) => (await harness.events.readAll(askId)).map((e) => [e.type, e.data]);

  describe(claimRun.name, () => {
    it('claims the ask: run 1, then run 2 for the next claim, which fences the first', async () => {
      const askId = randomUUID();
      await harness.events.open(askId, { ...ids, acceptedAt: new Date().toISOString() });
      const first = await claimRun(harness.deps(), askId);
      const second = await claimRun(harness.deps(), askId);
      if (!first || !second) throw new Error('not claimed');
      expect([first.claim.run, second.claim.run]).toEqual([1, 2]);
      expect([await harness.events.isCurrent(first.claim), await harness.events.isCurrent(second.claim)]).toEqual([
        false,
        true,
      ]);
    });

    it('carries the lock-lost signal on the run', async () => {
      const askId = randomUUID();
      await harness.events.open(askId, { ...ids, acceptedAt: new Date().toISOString() });
      const lockLost = new AbortController().signal;
      expect((await claimRun(harness.deps(), askId, lockLost))?.lockLost).toBe(lockLost);
    });

    it('returns undefined and logs when the ask has no meta in Redis', async () => {
      const lines: string[] = [];
      const logger = new Logger('claim-spec');
      jest.spyOn(logger, 'warn').mockImplementation((line: string) => void lines.push(line));
      const askId = randomUUID();
      expect(await claimRun({ events: harness.events, logger }, askId)).toBeUndefined();
      expect(lines).toEqual([`ask ${askId}: no meta in Redis, nothing to run`]);
    });
  });

  describe(resumeRun.name, () => {
    it('does nothing for a first run (attempt 1, claim 1), even after earlier text', async () => {
      const { askId, run } = await claimed();
      await harness.events.publish(askId, 'delta', { text: 'Par' }, run.claim);
      expect(await resumeRun(harness.deps(), data(askId), run, 1)).toBe('answer');
      expect(await events(askId)).toEqual([['delta', { text: 'Par' }]]);
    });

    it('resets text an earlier attempt streamed, then answers', async () => {
      const { askId, run } = await claimed();
      await harness.events.publish(askId, 'delta', { text: 'Par' }, run.claim);
      expect(await resumeRun(harness.deps(), data(askId), run, 2)).toBe('answer');
      expect(await events(askId)).toEqual([
        ['delta', { text: 'Par' }],
        ['reset', { attempt: 2, reason: 'the worker restarted this answer' }],
      ]);
    });

    it('resends the stored pair (reset, delta, done) and finishes: no second answer', async () => {
      const { askId, run } = await claimed();
      const stored = await harness.sessions.appendMessage({ ...ids, askId, question: 'Q?', answer: 'A graph.' });
      expect(await resumeRun(harness.deps(), data(askId), run, 2)).toBe('finished');
      expect(await events(askId)).toEqual([
        ['reset', { attempt: 0, reason: 'answer already stored; resending it' }],
        ['delta', { text: 'A graph.' }],
        ['done', { messageId: stored.message.id, usage: { promptTokens: null, completionTokens: null }, sources: [] }],
      ]);
    });

    it('finishes without publishing when the ask already ended (a later claim of an ended ask)', async () => {
      const { askId, run } = await claimed();
      await harness.events.publish(askId, 'error', { status: 404, error: 'not found', code: 'not_found' }, run.claim);
      const later = await harness.events.claim(askId);
      if (!later) throw new Error('not claimed');
      expect(await resumeRun(harness.deps(), data(askId), { claim: later }, 1)).toBe('finished');
      expect((await events(askId)).map(([type]) => type)).toEqual(['error']);
    });
  });

  describe(finishIfAlreadyStored.name, () => {
    it('is false for an open ask with nothing stored, and publishes nothing', async () => {
      const { askId, run } = await claimed();
      expect(await finishIfAlreadyStored(harness.deps(), data(askId), run)).toBe(false);
      expect(await events(askId)).toEqual([]);
    });
  });

  describe(resetIfStreamed.name, () => {
    it.each([
      ['nothing was streamed', [], []],
      ['a budget was published', ['budget'], ['budget', 'reset']],
      ['a reset already followed the text', ['delta', 'reset'], ['delta', 'reset']],
      ['text followed the last reset', ['delta', 'reset', 'delta'], ['delta', 'reset', 'delta', 'reset']],
    ] as const)('when %s publishes %j → %j', async (_label, before, after) => {
      const { askId, run } = await claimed();
      for (const type of before) {
        if (type === 'reset') await harness.events.publish(askId, 'reset', { attempt: 1, reason: 'r' }, run.claim);
        else if (type === 'delta') await harness.events.publish(askId, 'delta', { text: 't' }, run.claim);
        else await harness.events.publish(askId, 'budget', { window: 1 } as never, run.claim);
      }
      await resetIfStreamed(harness.deps(), askId, 3, run);
      expect((await events(askId)).map(([type]) => type)).toEqual(after);
    });
  });
});
