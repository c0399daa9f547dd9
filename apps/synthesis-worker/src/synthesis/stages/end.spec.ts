import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { internalError, notFound } from '@ask/ask-errors';
import { FencedPublishError } from '@ask/event-stream';
import { asksTotal } from '@ask/observability';
import { createSynthesisHarness, type SynthesisHarness } from '../../testing/synthesis-harness';
import { endWithError, publishDone, stopOrFail } from './end';
import type { Run } from './turn';

// Integration: the ends of a run on the harness's Redis: `done`, the typed `error`, a fenced stop, a failed attempt.
describe('end stage', () => {
  jest.setTimeout(60_000);
  let harness: SynthesisHarness;
  beforeAll(async () => {
    harness = await createSynthesisHarness({ name: 'end-stage' });
  });
  afterAll(() => harness.close());

  const acceptedAt = new Date().toISOString();
  /** A new ask opened in Redis (no events yet) and claimed once. */
  async function claimed(): Promise<{ askId: string; run: Run }> {
    const askId = randomUUID();
    await harness.events.open(askId, { projectId: randomUUID(), sessionId: randomUUID(), acceptedAt });
    const claim = await harness.events.claim(askId);
    if (!claim) throw new Error('not claimed');
    return { askId, run: { claim } };
  }
  const events = async (askId: string) => (await harness.events.readAll(askId)).map((e) => [e.type, e.data]);
  const outcomes = async (outcome: string) =>
    (await asksTotal.get()).values.find((v) => v.labels.outcome === outcome)?.value ?? 0;

  describe(publishDone.name, () => {
    it('ends the ask with done: message id, the provider’s usage, sources and the warning; counts a done', async () => {
      const { askId, run } = await claimed();
      const before = await outcomes('done');
      const sources = [{ id: 'k1', kind: 'knowledge', title: 'HNSW' }];
      const result = { text: 'A graph.', promptTokens: 120, completionTokens: 7 };
      await publishDone(
        harness.deps(),
        { data: { askId, acceptedAt } as never, run },
        { result },
        { messageId: 'm1', sources },
        'w',
      );
      expect(await events(askId)).toEqual([
        ['done', { messageId: 'm1', usage: { promptTokens: 120, completionTokens: 7 }, sources, warning: 'w' }],
      ]);
      expect((await outcomes('done')) - before).toBe(1);
    });

    it('carries no warning key without one, and null usage as the provider reported it', async () => {
      const { askId, run } = await claimed();
      const result = { text: '', promptTokens: null, completionTokens: null };
      await publishDone(
        harness.deps(),
        { data: { askId, acceptedAt } as never, run },
        { result },
        { messageId: 'm2', sources: [] },
      );
      expect(await events(askId)).toEqual([
        ['done', { messageId: 'm2', usage: { promptTokens: null, completionTokens: null }, sources: [] }],
      ]);
    });
  });

  describe(endWithError.name, () => {
    it('ends the ask with the typed error’s event and counts its code', async () => {
      const { askId, run } = await claimed();
      const before = await outcomes('not_found');
      await endWithError(harness.deps(), { askId, acceptedAt }, run, notFound('session s was deleted'));
      expect(await events(askId)).toEqual([
        ['error', { status: 404, ...notFound('session s was deleted').toBody(), details: 'session s was deleted' }],
      ]);
      expect((await outcomes('not_found')) - before).toBe(1);
    });

    it.each([
      ['an infrastructure error', new Error('connection refused')],
      ['a fencing refusal', new FencedPublishError('a', 'superseded')],
    ])('rethrows %s and publishes nothing', async (_label, err) => {
      const { askId, run } = await claimed();
      await expect(endWithError(harness.deps(), { askId, acceptedAt }, run, err)).rejects.toBe(err);
      expect(await events(askId)).toEqual([]);
    });
  });

  describe(stopOrFail.name, () => {
    function logged() {
      const lines: string[] = [];
      const logger = new Logger('end-spec');
      jest.spyOn(logger, 'warn').mockImplementation((line: string) => void lines.push(line));
      return { lines, deps: { events: harness.events, logger } };
    }

    it.each([
      ['held', false, 'run 1 stopped (superseded)'],
      ['lost', true, 'run 1 stopped (superseded, job lock lost)'],
    ])('resolves fenced for a fencing refusal and logs it (job lock %s)', async (_label, lost, line) => {
      const { askId, run } = await claimed();
      const lock = new AbortController();
      if (lost) lock.abort();
      const { lines, deps } = logged();
      const failed = jest.fn();
      const err = new FencedPublishError(askId, 'superseded');
      expect(await stopOrFail(deps, askId, { ...run, lockLost: lock.signal }, err, failed)).toBe('fenced');
      expect([lines, failed.mock.calls.length, await events(askId)]).toEqual([[`ask ${askId}: ${line}`], 0, []]);
    });

    it('hands any other failure to failed, whose end publishes the typed 500 under the run’s claim, then rethrows', async () => {
      const { askId, run } = await claimed();
      const err = new Error('connection refused');
      const seen: unknown[] = [];
      const failed = async (e: unknown, end: (error: ReturnType<typeof internalError>) => Promise<unknown>) => {
        seen.push(e);
        await end(internalError('id-1'));
        throw e;
      };
      await expect(stopOrFail(logged().deps, askId, run, err, failed)).rejects.toBe(err);
      expect([seen, await events(askId)]).toEqual([
        [err],
        [['error', { status: 500, ...internalError('id-1').toBody(), details: 'error_id=id-1' }]],
      ]);
    });

    it('ignores a fenced publish of the typed 500 (another run owns the ask) and rethrows the failure', async () => {
      const { askId, run } = await claimed();
      await harness.events.claim(askId);
      const err = new Error('connection refused');
      const failed = async (e: unknown, end: (error: ReturnType<typeof internalError>) => Promise<unknown>) => {
        await end(internalError('id-2'));
        throw e;
      };
      await expect(stopOrFail(logged().deps, askId, run, err, failed)).rejects.toBe(err);
      expect(await events(askId)).toEqual([]);
    });

    it('rethrows without failed (a caller that handles failures itself)', async () => {
      const { askId, run } = await claimed();
      const err = new Error('connection refused');
      await expect(stopOrFail(logged().deps, askId, run, err)).rejects.toBe(err);
    });
  });
});
