import {
  classesOf,
  learnEstimatePrior,
  learnScriptCalibration,
  measureText,
  PRIOR_MIN_RATIO,
  projectEstimatePrior,
  ScriptCalibratedCounter,
  type ScriptUsageRecord,
  usageRecordOf,
} from './script-calibration';
import { learnPlanningCalibration } from './planning-margin';
import { calibrationBaseCounter } from './script-aware-counter';
import { approximateCounter } from './select-token-counter';

const ENGLISH = 'An HNSW index creates a multilayer graph with better query performance than IVFFlat.';
const CHINESE = '向量索引如何工作？HNSW 索引创建一个多层图，查询性能更好。';
const HINDI = 'एचएनएसडब्ल्यू इंडेक्स एक बहुस्तरीय ग्राफ बनाता है जिसकी क्वेरी गति बेहतर होती है।';
const MIXED = 'HNSW index: एचएनएसडब्ल्यू इंडेक्स एक बहुस्तरीय ग्राफ बनाता है and is faster.';

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

/** A record of one request: floor tokens per class with their estimate (2 × floor), 11 tokens of framing, reported = framing + Σ factor × floor. */
const request = (
  parts: Partial<Record<'latin' | 'hangul' | 'cyrillic' | 'indic', [floor: number, factor: number]>>,
  extra = 0,
  source: 'usage' | 'overflow' = 'usage',
): ScriptUsageRecord => {
  const entries = Object.entries(parts) as Array<[string, [number, number]]>;
  const total = entries.reduce((s, [, [f]]) => s + f, 0);
  return {
    estimated: total + 11,
    reported: 11 + entries.reduce((s, [, [f, k]]) => s + f * k, 0) + extra,
    script: entries
      .filter(([, [f]]) => f >= 0.1 * total)
      .map(([c]) => c)
      .join('+'),
    source,
    masses: Object.fromEntries(entries.map(([c, [f]]) => [c, [f, f * 2]])),
  };
};
const times = (n: number, r: ScriptUsageRecord) => Array.from({ length: n }, () => r);

describe(learnScriptCalibration.name, () => {
  it.each([
    [
      'pure requests: calibrated at their worst ratio (framing taken out) once 4 requests of evidence are in',
      [...times(3, request({ latin: [1000, 1.2] })), request({ latin: [1000, 1.3] })],
      { latin: { factor: 1.3, samples: 4, evidence: 4 } },
    ],
    ['3 requests of evidence: not yet', times(3, request({ latin: [1000, 1.2] })), {}],
    [
      'one overflow record calibrates its class at once',
      [request({ indic: [1000, 2.5] }, 0, 'overflow')],
      { indic: { factor: 2.5, samples: 1, evidence: 0 } },
    ],
    [
      'a ratio far above the rest is evidence, not a fault',
      [request({ hangul: [1000, 3] }), ...times(19, request({ hangul: [1000, 1.1] }))],
      { hangul: { factor: 3, samples: 20, evidence: 20 } },
    ],
    [
      'mixed requests: each class gets its own share of the reported tokens (Korean answers with Latin code)',
      [
        ...times(8, request({ latin: [200, 1.2], hangul: [800, 1.6] })),
        ...times(8, request({ latin: [600, 1.2], hangul: [400, 1.6] })),
      ],
      { latin: { factor: 1.2, samples: 16, evidence: 6.4 }, hangul: { factor: 1.6, samples: 16, evidence: 9.6 } },
    ],
    [
      'a class learns from mixed requests alone, with no pure request of its own',
      [
        ...times(6, request({ latin: [200, 1.1], hangul: [800, 1.7] })),
        ...times(6, request({ latin: [400, 1.1], hangul: [600, 1.7] })),
      ],
      // Latin carries 3.6 requests' worth: it keeps the estimate (2 × floor here), which covers it.
      { hangul: { factor: 1.7, samples: 12, evidence: 8.4 } },
    ],
    [
      'a class with too little evidence keeps the estimate, never the majority’s factor',
      [
        ...times(20, request({ latin: [1000, 1.2] })),
        ...times(3, request({ latin: [700, 1.2], cyrillic: [300, 1.9] })),
      ],
      { latin: { factor: 1.2, samples: 23, evidence: 22.1 } },
    ],
    [
      'only the 50 newest records of a class count',
      [...times(50, request({ latin: [1000, 1.1] })), ...times(10, request({ latin: [1000, 3] }))],
      { latin: { factor: 1.1, samples: 50, evidence: 50 } },
    ],
    [
      'a ratio under 1 gives factor 1',
      times(10, request({ hangul: [1000, 0.8] })),
      { hangul: { factor: 1, samples: 10, evidence: 10 } },
    ],
    [
      'records stored before issue 26 (no masses) share their floor evenly among their classes',
      times(6, { estimated: 1000, reported: 1200, script: 'latin' }),
      { latin: { factor: 1.2, samples: 6, evidence: 6 } },
    ],
    ['records without a class teach nothing', times(30, { estimated: 1000, reported: 2000, script: null }), {}],
    [
      // Bengali questions beside English knowledge chunks: the Indic floor is 1/6 of a request's, its
      // estimate 4/7 (the estimate's Indic rate is 10 × the floor's). Evidence is the share of the
      // estimate, what the class's factor replaces in a plan: 4 × 4/7 + 3 × 8/11 = 4.468 requests' worth.
      'evidence is the class’s share of the estimate: a class with a low floor rate calibrates from mixed requests',
      [
        ...times(4, {
          estimated: 1211,
          reported: 11 + 1.2 * 1000 + 1.5 * 200,
          script: 'latin+indic',
          masses: { latin: [1000, 1500], indic: [200, 2000] },
        }),
        ...times(3, {
          estimated: 711,
          reported: 11 + 1.2 * 500 + 1.5 * 200,
          script: 'latin+indic',
          masses: { latin: [500, 750], indic: [200, 2000] },
        }),
      ],
      // Latin's share of the estimate adds up to 2.532: it keeps its estimate (1.5 × floor), above its 1.2.
      { indic: { factor: 1.5, samples: 7, evidence: 4.468 } },
    ],
  ] as Array<[string, ScriptUsageRecord[], object]>)('%s', (_label, records, expected) => {
    expect(learnScriptCalibration(records)).toEqual(expected);
  });

  it('never under-counts an observed request: the least-known class of a request over the fit is raised', () => {
    const records = [
      // One Korean request 100 tokens over what the others say (a denser answer).
      request({ latin: [200, 1.2], hangul: [800, 1.6] }, 100),
      ...times(30, request({ latin: [1000, 1.2] })),
      ...times(9, request({ latin: [200, 1.2], hangul: [800, 1.6] })),
    ];
    const learned = learnScriptCalibration(records);
    const latin = learned.latin?.factor as number;
    const hangul = learned.hangul?.factor as number;
    for (const r of records) {
      const m = r.masses as Record<string, [number, number]>;
      expect(11 + latin * m['latin'][0] + hangul * (m['hangul']?.[0] ?? 0)).toBeGreaterThanOrEqual(r.reported - 1e-6);
    }
    // The bound raised hangul (8 requests of evidence against latin's 32), not latin.
    expect(latin).toBeCloseTo(1.2, 2);
    expect(hangul).toBeGreaterThan(1.6);
    expect(hangul).toBeLessThanOrEqual(1.6 + 100 / 800 + 0.01);
  });
});

describe('learnScriptCalibration, basis', () => {
  /**
   * A pure Latin request of `floor` tokens whose estimate is `rate` × floor (PostgreSQL manual chunks
   * at 1.5, UDHR prose at 1.2), 11 of framing, reported = 11 + `perEstimate` × estimate + `extra`.
   */
  const latin = (floor: number, rate: number, perEstimate: number, extra = 0): ScriptUsageRecord => ({
    estimated: floor + 11,
    reported: 11 + perEstimate * rate * floor + extra,
    script: 'latin',
    masses: { latin: [floor, rate * floor] },
  });
  const FLOORS = [4000, 3500, 3000, 2500, 2000, 1500, 1000, 500];

  it.each([
    [
      // True ÷ floor 1.2 and 1.5 by turns: one factor of the floor leaves every other request short.
      'calibrates on the estimate where the records fit one factor of it and not of the floor',
      FLOORS.map((f, i) => latin(f, i % 2 ? 1.5 : 1.2, 1)),
      { latin: { factor: 1, basis: 'estimate', samples: 8, evidence: 8 } },
    ],
    [
      'keeps the floor where the records fit one factor of it (the estimate scatters)',
      FLOORS.map((f, i) => ({ ...latin(f, i % 2 ? 1.5 : 1.2, 1), reported: 11 + 1.3 * f })),
      { latin: { factor: 1.3, samples: 8, evidence: 8 } },
    ],
    [
      'keeps the floor where both fit alike (the estimate a fixed multiple of the floor)',
      FLOORS.map((f) => latin(f, 2, 0.6)),
      { latin: { factor: 1.2, samples: 8, evidence: 8 } },
    ],
    [
      // 0.95 × the estimate, and 60 tokens more at 4,000 (estimate 4,800): 0.95 + 60 ÷ 4,800.
      'raises a factor of the estimate until no record is under-counted',
      FLOORS.map((f, i) => latin(f, i % 2 ? 1.5 : 1.2, 0.95, f === 4000 ? 60 : 0)),
      { latin: { factor: 0.9625, basis: 'estimate', samples: 8, evidence: 8 } },
    ],
    [
      // Reported 0.5 × the estimate is under the floor (0.6 × the estimate): the factor stops at floor ÷ estimate.
      'never takes a factor of the estimate under the floor',
      FLOORS.map((f) => latin(f, 2, 0.5)),
      { latin: { factor: 1, samples: 8, evidence: 8 } },
    ],
  ] as Array<[string, ScriptUsageRecord[], object]>)('%s', (_label, records, expected) => {
    expect(learnScriptCalibration(records)).toEqual(expected);
  });

  it('sizes the margin from the spread on the chosen basis', () => {
    const records = FLOORS.map((f, i) => latin(f, i % 2 ? 1.5 : 1.2, 0.95, f === 4000 ? 60 : 0));
    const learned = learnPlanningCalibration(records);
    // Least squares on the estimate: 0.953184; 4,000 planned 11 + 0.953184 × 4,800 = 4,586.3, reported 4,631: spread 0.0089.
    expect(learned.calibration).toEqual({ latin: { factor: 0.953184, basis: 'estimate', samples: 8, evidence: 8 } });
    expect(learned.margins).toEqual({ latin: { percent: 5, spread: 0.0089, records: 8 } });
  });

  it('plans a mixed record class by class on each class’s basis: Latin on its estimate, Hangul on its floor', () => {
    // Latin code (estimate 1.2 or 1.5 × floor by turns) at 1 × its estimate beside Korean at 1.6 × its floor.
    const records = [4000, 3500, 3000, 2500, 2000, 1500, 1000, 500].flatMap((f, i): ScriptUsageRecord[] => {
      const rate = i % 2 ? 1.5 : 1.2;
      return [
        {
          estimated: f + 11,
          reported: 11 + rate * f * 0.5 + 1.6 * f * 0.5,
          script: 'latin+hangul',
          masses: { latin: [f / 2, (rate * f) / 2], hangul: [f / 2, f] },
        },
        latin(f, rate, 1),
      ];
    });
    // Hangul's share of a mixed record's estimate: 1 ÷ 1.6 or 1 ÷ 1.75, 4 of each: 4.786 requests' worth.
    expect(learnScriptCalibration(records)).toEqual({
      latin: { factor: 1, basis: 'estimate', samples: 16, evidence: 11.214 },
      hangul: { factor: 1.6, samples: 8, evidence: 4.786 },
    });
  });
});

describe(learnEstimatePrior.name, () => {
  it('keeps, per class, the largest reported ÷ estimate above 1 of the records listing it; records without masses teach nothing', () => {
    expect(
      learnEstimatePrior([
        // Estimate 2 × floor + 11 of framing: 2,011; reported 11 + 3 × 1,000 + 5.5 = 3,016.5 → 1.5.
        request({ latin: [200, 3], hangul: [800, 3] }, 5.5),
        request({ latin: [1000, 1.2] }),
        { estimated: 1000, reported: 5000, script: 'cyrillic' },
      ]),
    ).toEqual({ latin: 1.5, hangul: 1.5 });
  });
});

describe(projectEstimatePrior.name, () => {
  it('takes the project’s own prior for a class its records hold, the model-wide one only for a class new to it and above 1 ÷ (1 − 15%)', () => {
    expect(PRIOR_MIN_RATIO).toBeCloseTo(1.176471, 6);
    const own = [request({ latin: [1000, 1.2] }), request({ indic: [1000, 2.5] })];
    const model = [
      ...own,
      // Another tenant: Latin counted 3,011 ÷ 2,011 = 1.497 × the estimate (a denser language of the class).
      request({ latin: [1000, 3] }),
      // Hangul 2,211 ÷ 2,011 = 1.099: within what the seed's 15% margin absorbs.
      request({ hangul: [1000, 2.2] }),
      // Cyrillic 2,611 ÷ 2,011 = 1.298: above it.
      request({ cyrillic: [1000, 2.6] }),
    ];
    // Latin: the project's own records (no ratio above 1) decide, as alone; Indic: its own 2,511 ÷ 2,011.
    expect(projectEstimatePrior(own, model)).toEqual({ indic: 1.248633, cyrillic: 1.298359 });
    // Alone on the model id (its records are the model's), the project plans with the same prior.
    expect(projectEstimatePrior(own, own)).toEqual({ indic: 1.248633 });
  });
});

describe(ScriptCalibratedCounter.name, () => {
  describe('countText', () => {
    it('takes a model-wide prior for a text the project has no evidence for: the estimate raised where the model id counted more than it', () => {
      const estimate = approximateCounter().countText(HINDI);
      const floor = calibrationBaseCounter().countText(HINDI);
      expect(new ScriptCalibratedCounter({}, { devanagari: 1.5 }).countText(HINDI)).toBe(
        Math.ceil(estimate * 1.5 - 1e-9),
      );
      expect(new ScriptCalibratedCounter({}, { cjk: 1.5 }).countText(HINDI)).toBe(estimate);
      // The project's own evidence decides once it has it, even when the prior is larger.
      const own = new ScriptCalibratedCounter({ devanagari: { factor: 1.2, samples: 6 } }, { devanagari: 3 });
      expect(own.countText(HINDI)).toBe(Math.ceil(floor * 1.2 - 1e-9));
    });

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

    it('multiplies the estimate of a text whose class is calibrated on its estimate', () => {
      const counter = new ScriptCalibratedCounter({ latin: { factor: 0.9, basis: 'estimate', samples: 8 } });
      // ENGLISH: estimate 20, floor 14: ⌈20 × 0.9⌉ = 18, 18 ÷ 14 = 1.2857 tokens per floor token.
      expect(approximateCounter().countText(ENGLISH)).toBe(20);
      expect(counter.countText(ENGLISH)).toBe(18);
      expect(counter.maxApplied).toBeCloseTo(1.285714, 6);
      // MIXED (floor 14, estimate 84, Latin 35.5%): ⌈84 × 0.3554 × 0.9 + 84 × 0.6446⌉ = ⌈26.87 + 54.15⌉.
      expect(counter.countText(MIXED)).toBe(82);
    });

    it('plans a text with any class that has no evidence with the uncalibrated estimate (a switch of script)', () => {
      const counter = new ScriptCalibratedCounter({
        latin: { factor: 1.25, samples: 10 },
        cjk: { factor: 1.316, samples: 200 },
      });
      expect(counter.countText(HINDI)).toBe(approximateCounter().countText(HINDI));
    });

    it('plans a mixed text class by class: a calibrated class at its factor, a class without evidence at its share of the estimate', () => {
      const counter = new ScriptCalibratedCounter({ latin: { factor: 1.25, samples: 10 } });
      // MIXED: floor 14, estimate 84, Latin 35.5% and Devanagari 64.5% of its letters.
      const m = measureText(MIXED);
      expect([m.floor, m.estimate, Object.keys(m.shares ?? {})]).toEqual([14, 84, ['latin', 'devanagari']]);
      // ⌈14 × 0.3554 × 1.25 + 84 × 0.6446⌉ = ⌈6.22 + 54.15⌉, not the whole estimate (84).
      expect(counter.countText(MIXED)).toBe(61);
      expect(Math.ceil(14 * (m.shares?.latin ?? 0) * 1.25 + 84 * (m.shares?.devanagari ?? 0))).toBe(61);
      // Without shares (a measure read from counts cached before they were stored): the estimate.
      expect(counter.countMeasured({ estimate: 84, floor: 14, mask: m.mask })).toBe(84);
    });
  });
});

describe(usageRecordOf.name, () => {
  it('adds the floor estimates of the parts and OpenAI framing, lists the classes of ≥ 10%, and the floor and estimate of each class', () => {
    const parts = [ENGLISH, HINDI, HINDI, HINDI].map((t) => measureText(t));
    const floor = parts.reduce((s, p) => s + p.floor, 0);
    const [en, hi] = [measureText(ENGLISH), measureText(HINDI)];
    expect(usageRecordOf(parts, 3)).toEqual({
      estimated: floor + 4 * 3 + 3,
      script: 'latin+devanagari',
      masses: { latin: [en.floor, en.estimate], devanagari: [3 * hi.floor, 3 * hi.estimate] },
    });
    expect(usageRecordOf([measureText(HINDI)], 2).script).toBe('devanagari');
    expect(usageRecordOf([], 0)).toEqual({ estimated: 3, script: null, masses: {} });
  });

  it('splits a mixed text by its classes’ shares of its letters, evenly when the shares are not known (cached counts)', () => {
    const mixed = measureText(MIXED);
    const shares = mixed.shares as Record<string, number>;
    expect(shares['latin'] + shares['devanagari']).toBeCloseTo(1, 9);
    expect(shares['devanagari']).toBeGreaterThan(shares['latin']);
    const { masses } = usageRecordOf([mixed], 1);
    expect(masses.devanagari?.[0]).toBeCloseTo(mixed.floor * shares['devanagari'], 2);
    const cached = usageRecordOf([{ estimate: mixed.estimate, floor: mixed.floor, mask: mixed.mask }], 1).masses;
    expect(cached).toEqual({
      latin: [mixed.floor / 2, mixed.estimate / 2],
      devanagari: [mixed.floor / 2, mixed.estimate / 2],
    });
  });
});
