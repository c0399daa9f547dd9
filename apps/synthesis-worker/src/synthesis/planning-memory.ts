import { Logger } from '@nestjs/common';
import { modelMetricLabel, type ResolvedModel } from '@ask/model-catalog';
import { calibrationFactor } from '@ask/observability';
import type {
  LearnedWindow,
  LearnedWindowsRepository,
  HistoryPair,
  StoredTokenUsageRecord,
  SessionsRepository,
  TokenCountsByCounter,
  UsageRepository,
} from '@ask/persistence';
import {
  approximateCounter,
  calibrationBaseCounter,
  type CounterChoice,
  type EstimatePrior,
  learnPlanningCalibration,
  projectEstimatePrior,
  SCRIPT_CALIBRATION_DEFAULTS,
  ScriptCalibratedCounter,
  type ScriptCalibration,
  type ScriptClass,
  classesOf,
  type ScriptUsageRecord,
  type TextMeasure,
  type TokenCounter,
  usageRecordOf,
} from '@ask/token-counting';
import { MEMORY_ACK, type SizedPrompt } from '@ask/context-budget';

/** Cache keys of a message's measure under the per-script calibrated estimate (see {@link PlanningMemory.history}). */
const ESTIMATE_ID = approximateCounter().id;
const FLOOR_ID = calibrationBaseCounter().id;
/** Holds each text's script-class bitmask (token-counting `TextMeasure.mask`), not a token count. */
export const CLASSES_ID = 'approx:script-v1-classes';
/**
 * Prefix of the cache keys of a mixed-script message's class shares (`<prefix><class>`, the class's
 * share of the text's letter floor in 1/10,000ths: token-counting `TextMeasure.shares`), so a cached
 * text plans class by class as a freshly measured one does. Not token counts.
 */
export const SHARE_ID_PREFIX = 'approx:script-v1-share:';
const SHARE_UNIT = 10_000;

/**
 * Which calibration records {@link PlanningMemory.planning} learns from (`UsageRepository.recentPerScript`'s
 * counter id and count per script class, the project's own and every project's), for a caller that
 * reads them with the project (`ProjectsRepository.findForSynthesis`).
 */
export const CALIBRATION_READ = { counterId: FLOOR_ID, perScript: SCRIPT_CALIBRATION_DEFAULTS.recent } as const;

/** The counter a turn plans with. */
export interface Planning {
  /** The planning counter (exact, or the per-script calibrated estimate). */
  counter: TokenCounter;
  /** Set when planning with the per-script calibrated estimate. */
  scripted?: ScriptCalibratedCounter;
  /** The project's learned per-class factors (empty for exact counters). */
  calibration: ScriptCalibration;
  /** The prior (`projectEstimatePrior`: the project's own, the model-wide one for a class new to it): used only where it is safer (`ScriptCalibratedCounter`). */
  prior?: EstimatePrior;
}

/** One earlier turn with its planning counts, for `sizePrompt`. */
export interface CountedTurn {
  message: HistoryPair;
  questionTokens: number;
  answerTokens: number;
  /** Measures of the question and the answer, when planning with the per-script estimate. */
  measures?: { question: TextMeasure; answer: TextMeasure };
}

/**
 * What the worker learns from providers and reads back when it plans:
 * per-script calibration factors from reported usage and disclosed overflow sizes, windows the
 * provider disclosed per project and model, and the session's cached counts. The arithmetic lives in
 * libs/token-counting (`ScriptCalibratedCounter`, `learnPlanningCalibration`, `usageRecordOf`): this
 * class only reads and writes what it needs.
 */
export class PlanningMemory {
  private readonly logger = new Logger(PlanningMemory.name);

  constructor(
    private readonly usage: UsageRepository,
    private readonly windows: LearnedWindowsRepository,
    private readonly sessions: SessionsRepository,
  ) {}

  /**
   * The model with its window lowered to the one the provider disclosed for this project, when that
   * is smaller. `remembered` is that window (tokens), or undefined.
   * @param known the project's remembered windows when the caller already read them
   *   (`ProjectsRepository.findForSynthesis`); read here otherwise.
   */
  async withRememberedWindow(
    projectId: string,
    model: ResolvedModel,
    known?: readonly LearnedWindow[],
  ): Promise<{ model: ResolvedModel; remembered?: number }> {
    const learned = known
      ? known.find((w) => w.provider === model.provider && w.model === model.model)
      : await this.windows.find(projectId, model.provider, model.model);
    if (!learned || learned.window >= model.window) return { model };
    return { model: { ...model, window: learned.window }, remembered: learned.window };
  }

  /** Remembers a window the provider disclosed when it is smaller than the one planned against. */
  async rememberWindow(
    projectId: string,
    model: ResolvedModel,
    plannedWindow: number,
    disclosed: number | undefined,
  ): Promise<void> {
    if (disclosed === undefined || !(disclosed > 0) || disclosed >= plannedWindow) return;
    await this.windows.remember(projectId, model.provider, model.model, disclosed);
    this.logger.warn(
      `provider ${model.provider}/${model.model} disclosed a window of ${disclosed} tokens (planned ${plannedWindow}): remembered for later plans`,
    );
  }

  /**
   * The counter to plan with. Exact counters plan as they are. The approximate estimate plans
   * through `ScriptCalibratedCounter`, with the factors and safety margins learned from the project's
   * own newest records per script class (`learnPlanningCalibration`: least squares over mixed
   * requests, and a margin of max(5%, 2 × the fit's largest under-count over the class's records as a
   * share of its largest request), the seed's 15% while a class has too few records), and the prior
   * (`projectEstimatePrior`): the project's own records' for a class they hold, the model-wide one
   * (every project's records of the model id) only for a class new to the project and only above what
   * the seed's margin absorbs, so another tenant's traffic never moves a plan that fits; it only ever
   * makes a plan larger and never moves a margin.
   * @param known the project's and the model's records as {@link CALIBRATION_READ} selects them,
   *   when the caller already read them (`ProjectsRepository.findForSynthesis`); read here otherwise.
   */
  async planning(
    choice: CounterChoice,
    model: Pick<ResolvedModel, 'provider' | 'model'>,
    projectId: string,
    known?: { calibration: StoredTokenUsageRecord[]; calibrationPrior: StoredTokenUsageRecord[] },
  ): Promise<Planning> {
    if (choice.exactPlan || choice.counter.id !== ESTIMATE_ID) return { counter: choice.counter, calibration: {} };
    const records =
      known ??
      (await this.usage.calibrationRecords(model.model, FLOOR_ID, SCRIPT_CALIBRATION_DEFAULTS.recent, projectId));
    const own = records.calibration.map(asScriptRecord);
    const learned = learnPlanningCalibration(own);
    const calibration = learned.calibration;
    const prior = projectEstimatePrior(own, records.calibrationPrior.map(asScriptRecord));
    // The gauge's label is the catalog family or `other` (the model id is the tenant's, unbounded):
    // models folded together show the factor set last.
    const label = modelMetricLabel(model);
    for (const [script, learned] of Object.entries(calibration))
      if (learned) calibrationFactor.set({ model: label, script }, learned.factor);
    const scripted = new ScriptCalibratedCounter(calibration, prior, learned);
    return { counter: scripted, scripted, calibration, prior };
  }

  /**
   * The session's earlier turns with their planning counts. Exact counters: counts cached under the
   * counter id, missing ones counted once and stored. The per-script estimate: each message's
   * estimate, floor and script classes are cached under three ids (`approx:script-v1`,
   * `approx:script-v1-floor`, {@link CLASSES_ID}), and a mixed-script text's class shares under
   * {@link SHARE_ID_PREFIX}, measured once and stored; the calibrated count is
   * computed from them at plan time, so a new factor never re-counts the history.
   * @param stored the session's pairs when the caller already read them (`historyForProject`);
   *   read here otherwise.
   */
  async history(sessionId: string, planning: Planning, stored?: HistoryPair[]): Promise<CountedTurn[]> {
    const messages = stored ?? (await this.sessions.history(sessionId));
    const { scripted, counter } = planning;
    if (!scripted) {
      const missing = messages.filter((m) => !m.tokenCounts?.[counter.id]);
      if (missing.length) {
        const counts = missing.map((m) => ({
          question: counter.countText(m.question),
          answer: counter.countText(m.answer),
        }));
        await this.sessions.setTokenCounts(
          missing.map((m) => m.id),
          counter.id,
          counts,
        );
        missing.forEach((m, i) => (m.tokenCounts = { ...m.tokenCounts, [counter.id]: counts[i] }));
      }
      return messages.map((message) => ({
        message,
        questionTokens: message.tokenCounts[counter.id].question,
        answerTokens: message.tokenCounts[counter.id].answer,
      }));
    }
    // A mixed-script message cached before shares were stored is measured once more, for its shares.
    const missing = messages.filter((m) => !hasMeasures(m.tokenCounts));
    if (missing.length) {
      const measured = missing.map((m) => ({ q: scripted.measure(m.question), a: scripted.measure(m.answer) }));
      const ids = missing.map((m) => m.id);
      await this.sessions.setTokenCounts(
        ids,
        ESTIMATE_ID,
        measured.map(({ q, a }) => ({ question: q.estimate, answer: a.estimate })),
      );
      await this.sessions.setTokenCounts(
        ids,
        FLOOR_ID,
        measured.map(({ q, a }) => ({ question: q.floor, answer: a.floor })),
      );
      await this.sessions.setTokenCounts(
        ids,
        CLASSES_ID,
        measured.map(({ q, a }) => ({ question: q.mask, answer: a.mask })),
      );
      const mixed = new Set(measured.flatMap(({ q, a }) => [...shareClasses(q), ...shareClasses(a)]));
      for (const cls of mixed)
        await this.sessions.setTokenCounts(
          ids,
          SHARE_ID_PREFIX + cls,
          measured.map(({ q, a }) => ({ question: shareUnits(q, cls), answer: shareUnits(a, cls) })),
        );
      missing.forEach(
        (m, i) => (m.tokenCounts = { ...m.tokenCounts, ...measuresToCounts(measured[i].q, measured[i].a) }),
      );
    }
    return messages.map((message) => {
      const question = cachedMeasure(message.tokenCounts, 'question');
      const answer = cachedMeasure(message.tokenCounts, 'answer');
      return {
        message,
        questionTokens: scripted.countMeasured(question),
        answerTokens: scripted.countMeasured(answer),
        measures: { question, answer },
      };
    });
  }

  /** The counts a new pair is stored with (never a calibrated figure: factors change). */
  countsToStore(planning: Planning, question: string, answer: string): TokenCountsByCounter {
    if (!planning.scripted)
      return {
        [planning.counter.id]: {
          question: planning.counter.countText(question),
          answer: planning.counter.countText(answer),
        },
      };
    return measuresToCounts(planning.scripted.measure(question), planning.scripted.measure(answer));
  }

  /**
   * Records one calibration observation of the project for the per-script estimate: the floor
   * estimate of what was sent and its floor and estimate per script class (from the measures of its
   * parts: no second pass over the history), and the provider's figure, reported usage (`usage`) or
   * the prompt size an overflow disclosed (`overflow`). A figure far above the estimate is kept: it is
   * the evidence of drift. Which class it is charged to is the learner's business
   * (`learnScriptCalibration`: least squares, then the least-known class of a request it would
   * under-count). Returns the record's script classes.
   */
  async record(
    projectId: string,
    model: string,
    planning: Planning,
    sent: { sized: SizedPrompt; question: string; history: readonly CountedTurn[] },
    reported: number,
    source: 'usage' | 'overflow',
  ): Promise<string | null> {
    const scripted = planning.scripted;
    if (!scripted || !(reported > 0)) return null;
    const { sized, question, history } = sent;
    const kept = new Set(sized.plan.keptTurnIds);
    // messages[0] is the system prompt alone (assembleMessages).
    const parts: TextMeasure[] = [scripted.measure(sized.messages[0]?.content ?? ''), scripted.measure(question)];
    // Conversation memory's two messages (the quoted summaries and the assistant's acknowledgement)
    // were sent too: without them a report looks like drift.
    if (sized.memoryText) parts.push(scripted.measure(sized.memoryText), scripted.measure(MEMORY_ACK));
    for (const text of sized.keptItemTexts) parts.push(scripted.measure(text));
    for (const turn of history)
      if (kept.has(turn.message.id) && turn.measures) parts.push(turn.measures.question, turn.measures.answer);
    const { estimated, script, masses } = usageRecordOf(parts, sized.messages.length);
    await this.usage.record({ model, counterId: FLOOR_ID, estimated, reported, script, source, projectId, masses });
    return script;
  }
}

/** A stored record as the learner reads it. */
function asScriptRecord(r: StoredTokenUsageRecord): ScriptUsageRecord {
  return {
    estimated: r.estimated,
    reported: r.reported,
    script: r.script,
    source: r.source,
    ...(r.masses ? { masses: r.masses as ScriptUsageRecord['masses'] } : {}),
  };
}

/**
 * A pair's planning tokens (question + answer) from the counts it was stored with
 * (`PlanningMemory.countsToStore`, or cached by {@link PlanningMemory.history}): the exact counter's
 * cached counts, or the per-script estimate's calibrated count of the cached measures (the same
 * figure as `countText`, which is `countMeasured(measure(text))`). Counted only when no counts are
 * cached under the planning counter.
 */
export function storedPairTokens(
  planning: Planning,
  message: Pick<HistoryPair, 'question' | 'answer' | 'tokenCounts'>,
): number {
  const c = message.tokenCounts ?? {};
  const { scripted, counter } = planning;
  if (!scripted) {
    const cached = c[counter.id];
    if (cached) return cached.question + cached.answer;
  } else if (c[ESTIMATE_ID] && c[FLOOR_ID] && c[CLASSES_ID]) {
    return scripted.countMeasured(cachedMeasure(c, 'question')) + scripted.countMeasured(cachedMeasure(c, 'answer'));
  }
  return counter.countText(message.question) + counter.countText(message.answer);
}

function measuresToCounts(q: TextMeasure, a: TextMeasure): TokenCountsByCounter {
  const counts: TokenCountsByCounter = {
    [ESTIMATE_ID]: { question: q.estimate, answer: a.estimate },
    [FLOOR_ID]: { question: q.floor, answer: a.floor },
    [CLASSES_ID]: { question: q.mask, answer: a.mask },
  };
  for (const cls of new Set([...shareClasses(q), ...shareClasses(a)]))
    counts[SHARE_ID_PREFIX + cls] = { question: shareUnits(q, cls), answer: shareUnits(a, cls) };
  return counts;
}

/** The classes whose shares a measure carries (a text of two classes or more). */
function shareClasses(m: TextMeasure): ScriptClass[] {
  return m.shares ? classesOf(m.mask) : [];
}

function shareUnits(m: TextMeasure, cls: ScriptClass): number {
  return Math.round((m.shares?.[cls] ?? 0) * SHARE_UNIT);
}

/** True when a message's cached counts hold its measures, and its shares when a side is mixed-script. */
function hasMeasures(c: TokenCountsByCounter | undefined): boolean {
  if (!(c?.[ESTIMATE_ID] && c[FLOOR_ID] && c[CLASSES_ID])) return false;
  const masks = c[CLASSES_ID];
  return [masks.question, masks.answer].every(
    (mask) => classesOf(mask).length < 2 || classesOf(mask).every((cls) => c[SHARE_ID_PREFIX + cls] !== undefined),
  );
}

/** One side's measure from cached counts, with its shares when they were stored (see {@link SHARE_ID_PREFIX}). */
function cachedMeasure(c: TokenCountsByCounter, side: 'question' | 'answer'): TextMeasure {
  const m: TextMeasure = { estimate: c[ESTIMATE_ID][side], floor: c[FLOOR_ID][side], mask: c[CLASSES_ID][side] };
  const classes = classesOf(m.mask);
  if (classes.length < 2) return m;
  const units = classes.map((cls) => c[SHARE_ID_PREFIX + cls]?.[side]);
  const total = units.reduce<number>((sum, u) => sum + (u ?? 0), 0);
  if (units.some((u) => u === undefined) || !(total > 0)) return m;
  m.shares = Object.fromEntries(classes.map((cls, i) => [cls, (units[i] as number) / total]));
  return m;
}

/** `{ cjk: 1.316, … }`: the learned factor per script class, for the `budget` event and the project's read. */
export function factorsOf(calibration: ScriptCalibration): Record<string, number> {
  return Object.fromEntries(
    Object.entries(calibration).flatMap(([script, learned]) =>
      learned ? [[script, Number(learned.factor.toFixed(4))]] : [],
    ),
  );
}
