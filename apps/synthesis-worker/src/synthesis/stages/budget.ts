import { type BudgetEvent, type BudgetMemory, promptInputLimit } from '@ask/ask-contracts';
import type { PromptPlan, SizedPrompt } from '@ask/context-budget';
import type { AskEventStream } from '@ask/event-stream';
import { modelMetricLabel } from '@ask/model-catalog';
import { budgetFillRatio, promptTokensPlanned, turnsDroppedTotal } from '@ask/observability';
import { factorsOf } from '../planning-memory';
import type { Turn } from './turn';

/**
 * The turn's `budget` event for the plan `sized` (all figures in tokens; `calibration` the largest
 * per-script factor applied, 4 decimals; `observedRatio` the re-plan's scale when above 1).
 */
export function budgetEvent(
  turn: Pick<Turn, 'model' | 'maxTokens' | 'choice' | 'planning' | 'remembered' | 'history'>,
  sized: SizedPrompt,
): BudgetEvent {
  const { plan } = sized;
  const { model, choice, planning } = turn;
  return {
    provider: model.provider,
    model: model.model,
    window: sized.window,
    maxTokens: turn.maxTokens,
    reserve: plan.reserve,
    margin: plan.margin,
    marginPercent: sized.margin.percent,
    marginBasis: sized.margin.basis,
    ...(sized.margin.spread !== undefined ? { marginSpread: sized.margin.spread } : {}),
    counter: choice.exactPlan ? 'exact' : 'approximate',
    counterId: planning.counter.id,
    calibration: Number((planning.scripted?.maxApplied ?? 1).toFixed(4)),
    calibrationByScript: factorsOf(planning.calibration),
    ...(turn.remembered !== undefined ? { rememberedWindow: turn.remembered } : {}),
    ...(sized.scale > 1 ? { observedRatio: Number(sized.scale.toFixed(4)) } : {}),
    available: plan.available,
    used: plan.used,
    turnsKept: plan.turnsKept,
    turnsDropped: plan.turnsDropped,
    contextKept: plan.contextKept,
    contextDropped: plan.contextDropped,
    keptTurnIds: plan.keptTurnIds,
    items: plan.items,
    relevanceFloor: plan.relevanceFloor,
    memory: budgetMemory(
      plan,
      turn.history.map((t) => t.message.id),
    ),
  };
}

/** Publishes the turn's `budget` event ({@link budgetEvent}), observes the plan's metrics, and returns the event (stored with the answer). */
export async function publishBudget(events: AskEventStream, turn: Turn, sized: SizedPrompt): Promise<BudgetEvent> {
  const budget = budgetEvent(turn, sized);
  await events.publish(turn.data.askId, 'budget', budget, turn.run.claim);
  const { plan } = sized;
  // The catalog family or `other`: the model id is the tenant's, unbounded.
  const label = { model: modelMetricLabel(turn.model) };
  promptTokensPlanned.observe(label, plan.used);
  // Against the prompt's own limit (window − max_tokens − margin): `used` includes the system prompt,
  // which the reserve holds, so `available` (net of the reserve) would read over 1 on a full plan.
  const inputLimit = promptInputLimit(budget);
  if (inputLimit > 0) budgetFillRatio.observe(label, plan.used / inputLimit);
  if (plan.turnsDropped) turnsDroppedTotal.inc(label, plan.turnsDropped);
  return budget;
}

/**
 * The `budget` event's memory figures: each list of the plan as ranges of 1-based turn positions
 * (`historyIds` is the session's pairs, oldest first).
 */
export function budgetMemory(plan: Pick<PromptPlan, 'memory'>, historyIds: readonly string[]): BudgetMemory {
  const position = new Map(historyIds.map((id, i) => [id, i + 1]));
  const ranges = (ids: readonly string[]): Array<[number, number]> => {
    const out: Array<[number, number]> = [];
    for (const n of ids
      .map((id) => position.get(id) ?? 0)
      .filter((n) => n > 0)
      .sort((a, b) => a - b)) {
      const last = out.at(-1);
      if (last && last[1] + 1 === n) last[1] = n;
      else out.push([n, n]);
    }
    return out;
  };
  const m = plan.memory;
  return {
    mode: m.mode,
    verbatimPairs: m.verbatimTurnIds.length,
    summarisedPairs: m.summarisedTurnIds.length,
    compactedPairs: m.compactedTurnIds.length,
    droppedPairs: m.droppedTurnIds.length,
    verbatim: ranges(m.verbatimTurnIds),
    summarised: ranges(m.summarisedTurnIds),
    compacted: ranges(m.compactedTurnIds),
    dropped: ranges(m.droppedTurnIds),
    sessionSummary: m.sessionSummaryTokens > 0,
    sessionSummaryTokens: m.sessionSummaryTokens,
    memoryTokens: m.memoryTokens,
  };
}
