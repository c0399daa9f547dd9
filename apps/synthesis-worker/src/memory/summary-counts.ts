import type { SummaryTokenCounts } from '@ask/persistence';
import { approximateCounter, calibrationBaseCounter } from '@ask/token-counting';
import { CLASSES_ID, type Planning } from '../synthesis/planning-memory';

const ESTIMATE_ID = approximateCounter().id;
const FLOOR_ID = calibrationBaseCounter().id;

/**
 * The counts a summary text is cached with under the planning counter: `{ [counterId]: tokens }`
 * for an exact counter; for the per-script estimate its estimate, floor and script-class mask
 * (never a calibrated figure: factors change), as messages are cached (`PlanningMemory.history`).
 */
export function summaryCounts(planning: Planning, text: string): SummaryTokenCounts {
  if (!planning.scripted) return { [planning.counter.id]: planning.counter.countText(text) };
  const m = planning.scripted.measure(text);
  return { [ESTIMATE_ID]: m.estimate, [FLOOR_ID]: m.floor, [CLASSES_ID]: m.mask };
}

/** Planning tokens of a summary from its cached counts, or undefined when they were cached under another counter. */
export function summaryTokens(planning: Planning, counts: SummaryTokenCounts): number | undefined {
  if (!planning.scripted) return counts[planning.counter.id];
  const [estimate, floor, mask] = [counts[ESTIMATE_ID], counts[FLOOR_ID], counts[CLASSES_ID]];
  if (estimate === undefined || floor === undefined || mask === undefined) return undefined;
  return planning.scripted.countMeasured({ estimate, floor, mask });
}
