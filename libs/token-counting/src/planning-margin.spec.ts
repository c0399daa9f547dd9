import { calibrationBaseCounter } from './script-aware-counter';
import { learnPlanningCalibration, PLANNING_MARGIN_DEFAULTS } from './planning-margin';
import {
  learnScriptCalibration,
  measureText,
  ScriptCalibratedCounter,
  type ScriptUsageRecord,
} from './script-calibration';

/**
 * A pure Latin request: `floor` tokens of text, 11 of framing (estimated = floor + 11), reported =
 * 11 + 1.2 × floor + `offBy`. Offsets whose Σ floor × offset is 0 leave the least-squares factor at 1.2.
 */
const latin = (floor: number, offBy = 0): ScriptUsageRecord => ({
  estimated: floor + 11,
  reported: 11 + 1.2 * floor + offBy,
  script: 'latin',
  masses: { latin: [floor, 2 * floor] },
});

/** Eight records (floors 500 … 4,000, newest first) with `up` tokens more at 4,000 and 2 × `up` fewer at 2,000. */
const eight = (up: number): ScriptUsageRecord[] =>
  [4000, 3500, 3000, 2500, 2000, 1500, 1000, 500].map((f) => latin(f, f === 4000 ? up : f === 2000 ? -2 * up : 0));

describe(learnPlanningCalibration.name, () => {
  it('plans with the least-squares factor, not the worst record', () => {
    const learned = learnPlanningCalibration(eight(150));
    expect(learned.calibration.latin?.factor).toBe(1.2);
    // The bound of learnScriptCalibration raises it until the record at 4,000 is not under-counted.
    expect(learnScriptCalibration(eight(150)).latin?.factor).toBe(1.2375);
  });

  it.each([
    // [under-count at 4,000, spread = under-count ÷ largest planned (11 + 4,800), margin %]
    [40, 0.0083, 5],
    [150, 0.0312, 6.24],
    [400, 0.0831, 16.63],
  ])(
    'sizes the margin from the spread: %i tokens under at the largest request → spread %d, margin %d%%',
    (up, spread, percent) => {
      const learned = learnPlanningCalibration(eight(up));
      expect(learned.calibration.latin?.factor).toBe(1.2);
      expect(learned.margins).toEqual({ latin: { percent, spread, records: 8 } });
      expect(learned.seen).toEqual(['latin']);
    },
  );

  it('keeps the floor and the multiple it is given', () => {
    expect(learnPlanningCalibration(eight(150), { floorPercent: 7 }).margins.latin?.percent).toBe(7);
    expect(learnPlanningCalibration(eight(150), { spreadMultiple: 3 }).margins.latin?.percent).toBe(9.36);
    expect(PLANNING_MARGIN_DEFAULTS).toEqual({ floorPercent: 5, spreadMultiple: 2, minRecords: 8 });
  });

  it('gives no margin to a class with fewer than 8 records of its own, which keeps the bounded factor', () => {
    const seven = eight(150).slice(0, 7);
    const learned = learnPlanningCalibration(seven);
    expect(learned.margins).toEqual({});
    expect(learned.calibration).toEqual(learnScriptCalibration(seven));
  });

  it('fits a class short of evidence no higher than its estimate, so it cannot act as an intercept', () => {
    // A Bengali session: 50 floor tokens of an English system prompt (estimate 60, 1.2 ×) in every
    // request, the Indic text at 6 × its floor, and 300 tokens a request the floor does not see.
    const bengali = [4000, 3500, 3000, 2500, 2000, 1500, 1000, 500].map((f): ScriptUsageRecord => ({
      estimated: f + 50 + 11,
      reported: 11 + 50 + 6 * f + 300,
      script: 'indic',
      masses: { indic: [f, 4 * f], latin: [50, 60] },
    }));
    const learned = learnPlanningCalibration(bengali);
    // Latin (0.1 requests' worth each) is not calibrated, and fitted at most at 1.2: the 300 tokens go
    // to the Indic factor, where the planner counts them. Free, Latin took them all (a factor of 7,
    // y = 5 × floor + 6 × 50 exactly) and Indic stayed at 6: every request planned (Latin at its
    // estimate) 290 tokens short, spread 290 ÷ 24,071 = 0.0120.
    expect(Object.keys(learned.calibration)).toEqual(['indic']);
    expect(learned.calibration.indic?.factor).toBe(6.102353);
    expect(learned.margins.indic).toEqual({ percent: 5, spread: 0.0098, records: 8 });
  });

  it("reads only the records it is given: another project's records never move a margin", () => {
    const own = eight(150);
    const noisy = [latin(4000, 900), latin(3000, -600), ...own];
    expect(learnPlanningCalibration(own).margins.latin?.percent).toBe(6.24);
    // The same project's own records decide; a caller that mixed in others' would see them move it.
    expect(learnPlanningCalibration(noisy).margins.latin?.percent).not.toBe(6.24);
  });
});

describe(`${ScriptCalibratedCounter.name}.safetyMargin`, () => {
  const ENGLISH = 'The context window holds the system prompt, the retrieved chunks and the kept turns of the session.';
  const HINDI = 'सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता और समानता प्राप्त है।';
  const learned = learnPlanningCalibration(eight(150));

  it('is undefined without evidence (the seed rule applies)', () => {
    const counter = new ScriptCalibratedCounter(learned.calibration);
    counter.countText(ENGLISH);
    expect(counter.safetyMargin(8192, 2048)).toBeUndefined();
  });

  it("is the seed's 15% while no text applied a learned factor", () => {
    const counter = new ScriptCalibratedCounter({}, {}, { margins: {}, seen: [] });
    counter.countText(ENGLISH);
    expect(counter.safetyMargin(8192, 2048)).toEqual({ percent: 15, basis: 'approximate' });
  });

  it("is the class's margin when every text applied its factor", () => {
    const counter = new ScriptCalibratedCounter(learned.calibration, {}, learned);
    expect(counter.countText(ENGLISH)).toBe(Math.ceil(calibrationBaseCounter().countText(ENGLISH) * 1.2 - 1e-9));
    expect(counter.safetyMargin(8192, 2048)).toEqual({
      percent: 6.24,
      basis: 'calibrated',
      spread: 0.0312,
      classes: ['latin'],
      estimateShare: 0,
    });
  });

  it('is 15% for a calibrated class with too few records of its own', () => {
    const seven = learnPlanningCalibration(eight(150).slice(0, 7));
    const counter = new ScriptCalibratedCounter(seven.calibration, {}, seven);
    counter.countText(ENGLISH);
    expect(counter.safetyMargin(8192, 2048)?.percent).toBe(15);
  });

  it('adds 15% × the share of a script new to the project, out of N + min(C, window − max_tokens)', () => {
    const counter = new ScriptCalibratedCounter(learned.calibration, {}, learned);
    const c = counter.countText(ENGLISH);
    const n = counter.countText(HINDI);
    expect(n).toBe(measureText(HINDI).estimate);
    const share = n / (n + c);
    const margin = counter.safetyMargin(8192, 2048);
    expect(margin?.estimateShare).toBe(Number(share.toFixed(4)));
    expect(margin?.percent).toBe(Math.min(15, Math.ceil((6.24 + 15 * share) * 100 - 1e-9) / 100));
  });

  it('gives its lowest class margin as the smallest a prompt can plan with (15% without one)', () => {
    expect(new ScriptCalibratedCounter(learned.calibration, {}, learned).lowestMarginPercent()).toBe(6.24);
    const seven = learnPlanningCalibration(eight(150).slice(0, 7));
    expect(new ScriptCalibratedCounter(seven.calibration, {}, seven).lowestMarginPercent()).toBe(15);
    expect(new ScriptCalibratedCounter({}).lowestMarginPercent()).toBe(15);
  });

  it('adds nothing for a text of a class the records held, planned with the estimate', () => {
    const counter = new ScriptCalibratedCounter(learned.calibration, {}, { ...learned, seen: ['latin', 'devanagari'] });
    counter.countText(ENGLISH);
    counter.countText(HINDI);
    expect(counter.safetyMargin(8192, 2048)?.percent).toBe(6.24);
  });
});
