import { ScriptCalibratedCounter, TiktokenCounter } from '@ask/token-counting';
import { CLASSES_ID, storedPairTokens } from './planning-memory';

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
  });
});
