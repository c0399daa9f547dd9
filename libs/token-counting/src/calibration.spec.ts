import { CalibratedCounter, calibrated, learnCalibration, learnCalibrationDetailed, UsageRecord } from './calibration';
import type { TokenCounter } from './token-counter';
import { countFramedMessages } from './token-counter';

/** A counter that counts one token per character, framing 2 per message and 3 per request. */
const perChar: TokenCounter = {
  id: 'test:chars',
  exact: false,
  perMessageTokens: 2,
  perRequestTokens: 3,
  countText: (text) => text.length,
  countMessages(messages) {
    return countFramedMessages(this, messages);
  },
};

const records = (ratios: number[], estimated = 1000): UsageRecord[] =>
  ratios.map((r) => ({ estimated, reported: Math.round(estimated * r) }));

describe(CalibratedCounter.name, () => {
  describe('constructor', () => {
    it('never takes a factor below 1', () => {
      expect(new CalibratedCounter(perChar, 0.5).factor).toBe(1);
      expect(new CalibratedCounter(perChar, Number.NaN).factor).toBe(1);
      expect(new CalibratedCounter(perChar, 1.25).factor).toBe(1.25);
    });

    it('shows the factor in its id and stays approximate', () => {
      const counter = new CalibratedCounter(perChar, 1.25);
      expect(counter.id).toBe('test:chars×1.250');
      expect(counter.exact).toBe(false);
    });
  });

  describe('countText', () => {
    it('multiplies the base count and rounds up', () => {
      const counter = new CalibratedCounter(perChar, 1.25);
      expect(counter.countText('abcd')).toBe(5);
      expect(counter.countText('abc')).toBe(4); // 3.75 → 4
      expect(counter.countText('')).toBe(0);
    });
  });

  describe('countMessages', () => {
    it('scales the framing too', () => {
      const counter = new CalibratedCounter(perChar, 1.5);
      expect(counter.perMessageTokens).toBe(3);
      expect(counter.perRequestTokens).toBe(5); // 4.5 → 5
      expect(counter.countMessages([{ role: 'user', content: 'abcd' }])).toBe(6 + 3 + 5);
    });
  });

  describe('scale', () => {
    it('turns a cached base count into the calibrated one', () => {
      expect(new CalibratedCounter(perChar, 1.1).scale(100)).toBe(110);
      expect(new CalibratedCounter(perChar, 1.1).scale(0)).toBe(0);
    });
  });
});

describe(calibrated.name, () => {
  it('returns the counter itself for a factor of 1 or less', () => {
    expect(calibrated(perChar, 1)).toBe(perChar);
    expect(calibrated(perChar, 0.7)).toBe(perChar);
    expect(calibrated(perChar, 1.2).countText('abcde')).toBe(6);
  });
});

describe(learnCalibration.name, () => {
  it('gives 1 with fewer than 20 usable records', () => {
    expect(learnCalibration(records(Array(19).fill(1.3)))).toBe(1);
    expect(learnCalibration([])).toBe(1);
  });

  it('never gives a factor below 1, even when every estimate was high', () => {
    expect(learnCalibration(records(Array(50).fill(0.7)))).toBe(1);
  });

  it('takes the 98th percentile of reported ÷ estimated', () => {
    // 50 ratios 1.00, 1.01, …, 1.49: the 49th (index 48) is 1.48
    const ratios = Array.from({ length: 50 }, (_, i) => 1 + i / 100);
    expect(learnCalibration(records(ratios))).toBeCloseTo(1.48, 6);
  });

  it('ignores records with a non-positive figure', () => {
    const bad: UsageRecord[] = [
      { estimated: 0, reported: 10 },
      { estimated: 10, reported: 0 },
      { estimated: -5, reported: 10 },
    ];
    expect(learnCalibrationDetailed([...bad, ...records(Array(20).fill(1.2))]).samples).toBe(20);
  });

  it('leaves counting faults out and reports them', () => {
    const result = learnCalibrationDetailed([...records(Array(30).fill(1.1)), { estimated: 100, reported: 900 }]);
    expect(result.factor).toBeCloseTo(1.1, 6);
    expect(result.faults).toEqual([{ estimated: 100, reported: 900 }]);
  });

  it('accepts a stricter quantile and sample minimum', () => {
    const ratios = Array.from({ length: 10 }, (_, i) => 1 + i / 10);
    expect(learnCalibration(records(ratios), { minSamples: 10, quantile: 1 })).toBeCloseTo(1.9, 6);
  });
});
