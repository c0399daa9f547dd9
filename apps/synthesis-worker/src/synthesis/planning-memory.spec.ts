import type {
  LearnedWindowsRepository,
  SessionsRepository,
  StoredTokenUsageRecord,
  UsageRepository,
} from '@ask/persistence';
import { approximateCounter, type CounterChoice, ScriptCalibratedCounter, TiktokenCounter } from '@ask/token-counting';
import { CLASSES_ID, PlanningMemory, SHARE_ID_PREFIX, storedPairTokens } from './planning-memory';

describe('storedPairTokens', () => {
  const question = 'How do I build an HNSW index on a table of two million rows?';
  const answer = 'Use CREATE INDEX … USING hnsw (embedding vector_l2_ops); it takes a while on two million rows.';

  describe('with an exact counter', () => {
    const counter = new TiktokenCounter('o200k_base');
    const planning = { counter, calibration: {} };

    it('reads the counts the pair was stored with, without counting', () => {
      const counts = { [counter.id]: { question: 7, answer: 11 } };
      expect(storedPairTokens(planning, { question, answer, tokenCounts: counts })).toBe(18);
    });

    it('counts the texts when nothing is cached under its id', () => {
      const counts = { 'hf:llama3': { question: 7, answer: 11 } };
      expect(storedPairTokens(planning, { question, answer, tokenCounts: counts })).toBe(
        counter.countText(question) + counter.countText(answer),
      );
    });
  });

  describe('with the per-script estimate', () => {
    const scripted = new ScriptCalibratedCounter({
      latin: { factor: 1.25, samples: 3 },
    });
    const planning = { counter: scripted, scripted, calibration: {} };

    it('gives countText of both texts from the cached measures (estimate, floor, classes)', () => {
      const [q, a] = [scripted.measure(question), scripted.measure(answer)];
      const counts = {
        'approx:script-v1': { question: q.estimate, answer: a.estimate },
        'approx:script-v1-floor': { question: q.floor, answer: a.floor },
        [CLASSES_ID]: { question: q.mask, answer: a.mask },
      };
      const expected = scripted.countText(question) + scripted.countText(answer);
      expect(storedPairTokens(planning, { question: '', answer: '', tokenCounts: counts })).toBe(expected);
      expect(storedPairTokens(planning, { question, answer, tokenCounts: {} })).toBe(expected);
    });

    it('plans a cached mixed-script text class by class from its stored shares, as when it is measured', () => {
      const hindi = 'HNSW index: एचएनएसडब्ल्यू इंडेक्स एक बहुस्तरीय ग्राफ बनाता है and is faster.';
      const [q, a] = [scripted.measure(hindi), scripted.measure(answer)];
      const base = {
        'approx:script-v1': { question: q.estimate, answer: a.estimate },
        'approx:script-v1-floor': { question: q.floor, answer: a.floor },
        [CLASSES_ID]: { question: q.mask, answer: a.mask },
      };
      // Latin 35.5%, Devanagari 64.5% of the question's letters, in 1/10,000ths (the answer is Latin alone).
      const shares = {
        [`${SHARE_ID_PREFIX}latin`]: { question: 3554, answer: 0 },
        [`${SHARE_ID_PREFIX}devanagari`]: { question: 6446, answer: 0 },
      };
      const expected = scripted.countText(hindi) + scripted.countText(answer);
      expect(scripted.countText(hindi)).toBe(61);
      expect(storedPairTokens(planning, { question: '', answer: '', tokenCounts: { ...base, ...shares } })).toBe(
        expected,
      );
      // Without its shares (cached before they were stored) the mixed question plans at the estimate, 84.
      expect(storedPairTokens(planning, { question: '', answer: '', tokenCounts: base })).toBe(
        84 + scripted.countText(answer),
      );
    });
  });
});

describe(`${PlanningMemory.name}.planning`, () => {
  const memory = new PlanningMemory({} as UsageRepository, {} as LearnedWindowsRepository, {} as SessionsRepository);
  const choice: CounterChoice = { counter: approximateCounter(), exactPlan: false, reason: 'the estimate (spec)' };
  const model = { provider: 'openai' as const, model: 'shared-model' };
  const TEXT = 'The context window holds the system prompt, the retrieved chunks and the kept turns of the session.';
  /** A stored Latin record: `floor` tokens, reported 11 + 1.2 × floor + `offBy`. */
  const stored = (floor: number, offBy: number, projectId: string): StoredTokenUsageRecord => ({
    model: 'shared-model',
    counterId: 'approx:script-v1-floor',
    estimated: floor + 11,
    reported: 11 + 1.2 * floor + offBy,
    script: 'latin',
    source: 'usage',
    projectId,
    masses: { latin: [floor, 2 * floor] },
    createdAt: new Date(0),
  });
  const own = [4000, 3500, 3000, 2500, 2000, 1500, 1000, 500].map((f) =>
    stored(f, f === 4000 ? 150 : f === 2000 ? -300 : 0, 'a'),
  );
  const others = [stored(4000, 1200, 'b'), stored(3000, -900, 'b'), stored(500, 400, 'b')];

  it("sizes the margin from the project's own records; every other project's records never move it", async () => {
    const alone = await memory.planning(choice, model, 'a', { calibration: own, calibrationPrior: own });
    const shared = await memory.planning(choice, model, 'a', {
      calibration: own,
      calibrationPrior: [...others, ...own],
    });
    for (const planning of [alone, shared]) {
      expect(planning.calibration.latin?.factor).toBe(1.2);
      planning.scripted?.countText(TEXT);
    }
    expect(alone.scripted?.safetyMargin(8192, 2048)).toEqual({
      percent: 6.24,
      basis: 'calibrated',
      spread: 0.0312,
      classes: ['latin'],
      estimateShare: 0,
    });
    expect(shared.scripted?.safetyMargin(8192, 2048)).toEqual(alone.scripted?.safetyMargin(8192, 2048));
  });
});
