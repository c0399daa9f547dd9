import {
  classesOf,
  learnScriptCalibration,
  measureText,
  ScriptCalibratedCounter,
  type ScriptUsageRecord,
  usageRecordOf,
} from './script-calibration';
import { calibrationBaseCounter } from './script-aware-counter';
import { approximateCounter } from './select-token-counter';

const ENGLISH = 'An HNSW index creates a multilayer graph with better query performance than IVFFlat.';
const CHINESE = '向量索引如何工作？HNSW 索引创建一个多层图，查询性能更好。';
const HINDI = 'एचएनएसडब्ल्यू इंडेक्स एक बहुस्तरीय ग्राफ बनाता है जिसकी क्वेरी गति बेहतर होती है।';
const MIXED = 'HNSW index: एचएनएसडब्ल्यू इंडेक्स एक बहुस्तरीय ग्राफ बनाता है and is faster.';

const usage = (
  script: string | null,
  ratio: number,
  n: number,
  source: 'usage' | 'overflow' = 'usage',
): ScriptUsageRecord[] =>
  Array.from({ length: n }, () => ({ estimated: 1000, reported: Math.round(1000 * ratio), script, source }));

describe(measureText.name, () => {
  it.each([ENGLISH, CHINESE, HINDI, MIXED, '12345 + 678 = 13023;', ''])(
    'gives the estimate and the floor of the counters themselves: %s',
    (text) => {
      const m = measureText(text);
      expect([m.estimate, m.floor]).toEqual([
        approximateCounter().countText(text),
        calibrationBaseCounter().countText(text),
      ]);
    },
  );

  it.each([
    [ENGLISH, ['latin']],
    [CHINESE, ['cjk']],
    [HINDI, ['devanagari']],
    [MIXED, ['latin', 'devanagari']],
    ['12345 + 678 = 13023;', ['symbols']],
    ['', []],
  ] as const)('names the script classes that carry ≥ 10%% of the letters: %s', (text, classes) => {
    expect(classesOf(measureText(text).mask)).toEqual(classes);
  });
});

describe(learnScriptCalibration.name, () => {
  it.each([
    [
      '10 single-class records: calibrated at their worst ratio',
      [...usage('latin', 1.2, 9), ...usage('latin', 1.3, 1)],
      { latin: { factor: 1.3, samples: 10 } },
    ],
    ['9 records: not yet', usage('latin', 1.2, 9), {}],
    [
      'one overflow record calibrates its class at once',
      usage('devanagari', 2.5, 1, 'overflow'),
      { devanagari: { factor: 2.5, samples: 1 } },
    ],
    [
      'a ratio far above the rest is evidence, not a fault',
      [...usage('cjk', 3.0, 1), ...usage('cjk', 1.1, 19)],
      { cjk: { factor: 3, samples: 20 } },
    ],
    [
      'a mixed record raises each listed class but enables none',
      [...usage('latin+devanagari', 2.0, 5), ...usage('latin', 1.2, 10)],
      { latin: { factor: 2, samples: 15 } },
    ],
    [
      'only the 50 newest records of a class count',
      [...usage('latin', 1.1, 50), ...usage('latin', 3.0, 10)],
      { latin: { factor: 1.1, samples: 50 } },
    ],
    ['a ratio under 1 gives factor 1', usage('hangul', 0.8, 10), { hangul: { factor: 1, samples: 10 } }],
    ['records without a class teach nothing', usage(null, 2.0, 30), {}],
  ] as const)('%s', (_label, records, expected) => {
    expect(learnScriptCalibration(records)).toEqual(expected);
  });
});

describe(ScriptCalibratedCounter.name, () => {
  describe('countText', () => {
    it('is the uncalibrated estimate, with its id, when nothing is learned', () => {
      const counter = new ScriptCalibratedCounter({});
      expect(counter.id).toBe('approx:script-v1');
      for (const text of [ENGLISH, CHINESE, HINDI])
        expect(counter.countText(text)).toBe(approximateCounter().countText(text));
    });

    it('multiplies the floor of a text whose classes are all calibrated by their largest factor', () => {
      const counter = new ScriptCalibratedCounter({
        latin: { factor: 1.25, samples: 10 },
        cjk: { factor: 1.5, samples: 10 },
      });
      expect(counter.id).toBe('approx:script-v1+calibration');
      expect(counter.countText(ENGLISH)).toBe(Math.ceil(calibrationBaseCounter().countText(ENGLISH) * 1.25));
      expect(counter.countText(CHINESE)).toBe(Math.ceil(calibrationBaseCounter().countText(CHINESE) * 1.5));
      expect(counter.maxApplied).toBe(1.5);
    });

    it('plans a text with any class that has no evidence with the uncalibrated estimate (a switch of script)', () => {
      const counter = new ScriptCalibratedCounter({
        latin: { factor: 1.25, samples: 10 },
        cjk: { factor: 1.316, samples: 200 },
      });
      expect(counter.countText(HINDI)).toBe(approximateCounter().countText(HINDI));
      expect(counter.countText(MIXED)).toBe(approximateCounter().countText(MIXED));
    });
  });
});

describe(usageRecordOf.name, () => {
  it('adds the floor estimates of the parts and OpenAI framing, and lists the classes of ≥ 10%', () => {
    const parts = [ENGLISH, HINDI, HINDI, HINDI].map((t) => measureText(t));
    const floor = parts.reduce((s, p) => s + p.floor, 0);
    expect(usageRecordOf(parts, 3)).toEqual({ estimated: floor + 4 * 3 + 3, script: 'latin+devanagari' });
    expect(usageRecordOf([measureText(HINDI)], 2).script).toBe('devanagari');
    expect(usageRecordOf([], 0)).toEqual({ estimated: 3, script: null });
  });
});
