import { randomBytes } from 'node:crypto';
import { createSynthesisHarness, type SynthesisHarness } from '../../testing/synthesis-harness';
import { loadedTurn } from '../../testing/stage-turn';
import { checkReportedUsage, learnFromOverflow } from './learn';
import { firstPlan } from './plan';

// Integration: the learn stage on the harness: remembered windows and calibration records in PostgreSQL.
describe('learn stage', () => {
  jest.setTimeout(60_000);
  let harness: SynthesisHarness;
  beforeAll(async () => {
    harness = await createSynthesisHarness({ name: 'learn-stage', encryptionKey: randomBytes(32).toString('hex') });
  });
  afterAll(() => harness.close());

  // A model the catalog does not know: planned with the per-script estimate, whose records calibrate it.
  const estimated = (model: string) => ({
    provider: 'openai' as const,
    model,
    baseUrl: `${harness.upstream.url}/v1`,
    contextWindow: 8192,
    maxTokens: 1024,
  });
  const records = async (model: string) =>
    (await harness.usage.recent(model, 5)).map((r) => [r.source, r.script, r.estimated, r.reported]);

  describe(learnFromOverflow.name, () => {
    it('remembers the smaller window disclosed and records the disclosed prompt size for calibration', async () => {
      const { turn, deps } = await loadedTurn(harness, estimated('learn-overflow'));
      const { sized } = firstPlan(turn.planInput);
      await learnFromOverflow(deps, turn, sized, { kind: 'overflow', limit: 4096, promptTokens: 500 } as never);
      const window = await harness.windows.find(turn.project.id, 'openai', 'learn-overflow');
      expect(window?.window).toBe(4096);
      // The floor estimate of what was sent (81, all Latin script) against the 500 disclosed.
      expect(await records('learn-overflow')).toEqual([['overflow', 'latin', 81, 500]]);
    });

    it('remembers nothing for a disclosed window no smaller than the planned one, and records nothing without a size', async () => {
      const { turn, deps } = await loadedTurn(harness, estimated('learn-larger'));
      const { sized } = firstPlan(turn.planInput);
      await learnFromOverflow(deps, turn, sized, { kind: 'overflow', limit: 9000 } as never);
      expect(await harness.windows.find(turn.project.id, 'openai', 'learn-larger')).toBeUndefined();
      expect(await records('learn-larger')).toEqual([]);
    });
  });

  describe(checkReportedUsage.name, () => {
    it('records what the provider reported against the floor estimate of what was sent', async () => {
      const { turn, deps } = await loadedTurn(harness, estimated('learn-usage'));
      const { sized } = firstPlan(turn.planInput);
      expect(await checkReportedUsage(deps, turn, sized, 100)).toBeUndefined();
      // Planned at 122 (the calibrated estimate with its margin); its floor estimate is 81.
      expect([sized.plan.used, await records('learn-usage')]).toEqual([122, [['usage', 'latin', 81, 100]]]);
    });

    it('records nothing when the provider reported no prompt tokens', async () => {
      const { turn, deps } = await loadedTurn(harness, estimated('learn-none'));
      const { sized } = firstPlan(turn.planInput);
      expect([
        await checkReportedUsage(deps, turn, sized, null),
        await checkReportedUsage(deps, turn, sized, 0),
      ]).toEqual([undefined, undefined]);
      expect(await records('learn-none')).toEqual([]);
    });

    it('logs a counting fault for a report far above the plan', async () => {
      const { turn, deps } = await loadedTurn(harness, estimated('learn-fault'));
      const { sized } = firstPlan(turn.planInput);
      const warn = jest.spyOn(deps.logger, 'warn').mockImplementation(() => undefined);
      await checkReportedUsage(deps, turn, sized, sized.plan.used * 2);
      expect(warn.mock.calls).toEqual([
        ['counting fault: model=learn-fault counter=approx:script-v1 estimated=122 reported=244'],
      ]);
      warn.mockRestore();
    });

    it('warns in `done` of an Ollama report far below what was sent (silent truncation)', async () => {
      const { turn, deps } = await loadedTurn(harness, {
        provider: 'ollama',
        model: 'llama3.1:8b',
        baseUrl: harness.upstream.url,
        contextWindow: 8192,
        maxTokens: 1024,
      });
      const { sized } = firstPlan(turn.planInput);
      const warn = jest.spyOn(deps.logger, 'warn').mockImplementation(() => undefined);
      expect([sized.plan.used, await checkReportedUsage(deps, turn, sized, 10)]).toEqual([
        120,
        'the provider reported 10 prompt tokens for 120 sent: it may have truncated the prompt silently',
      ]);
      expect(warn.mock.calls.at(-1)).toEqual(['silent truncation suspected: model=llama3.1:8b sent=120 reported=10']);
      warn.mockRestore();
    });
  });
});
