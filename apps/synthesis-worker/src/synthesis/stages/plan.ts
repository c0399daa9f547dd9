import {
  assertFits,
  type PlanAt,
  planBareTurn,
  planTurn,
  replanFigures,
  sendsBareRequest,
  type SizedPrompt,
  type TurnPlanInput,
} from '@ask/context-budget';
import { inSpan } from '@ask/observability';
import type { HistoryPair } from '@ask/persistence';
import type { Overflow, Turn } from './turn';

/**
 * The plan stage: `planTurn` (libs/context-budget, pure) in an `ask.plan` span whose attributes are
 * the plan's figures in tokens, never its text.
 * @throws AskError 413 `context_overflow` when even the question with one item cannot fit.
 */
export function tracedPlan(input: TurnPlanInput<HistoryPair>, at: PlanAt = {}): SizedPrompt<HistoryPair> {
  return inSpan('ask.plan', {}, (span) => {
    const sized = planTurn(input, at);
    span?.setAttributes(planAttributes(sized));
    return sized;
  });
}

/**
 * The turn's first plan; `bare` when the approximate count found no room for the question with one
 * item and the bare request (system prompt + question + `max_tokens`) goes instead, so the provider
 * decides before any 413 (`sendsBareRequest`).
 * @throws AskError 413 `context_overflow` from an exact plan, or any other planning error.
 */
export function firstPlan(input: TurnPlanInput<HistoryPair>): { sized: SizedPrompt<HistoryPair>; bare: boolean } {
  try {
    return { sized: tracedPlan(input), bare: false };
  } catch (err) {
    if (!sendsBareRequest(err, input.exact)) throw err;
    return { sized: planBareTurn(input), bare: true };
  }
}

/**
 * The one re-plan after an overflow, with what the provider disclosed (`replanFigures`): never
 * resent as is.
 * @throws AskError 413 when the disclosed window leaves no room for a question (`assertFits`), or
 *   when the re-plan cannot place the question.
 */
export function replanAfterOverflow(
  turn: Pick<Turn, 'model' | 'maxTokens' | 'choice' | 'planInput' | 'lowestMargin'>,
  sized: SizedPrompt<HistoryPair>,
  overflow: Overflow,
): SizedPrompt<HistoryPair> {
  const next = replanFigures(sized, overflow);
  assertFits(turn.model.model, next.window, turn.maxTokens, turn.choice.exactPlan, turn.lowestMargin);
  return tracedPlan(turn.planInput, next);
}

/** The span attributes of one planning: its figures in tokens (no prompt text). */
export function planAttributes(sized: SizedPrompt): Record<string, number> {
  return {
    'ask.budget.window': sized.window,
    'ask.budget.used': sized.plan.used,
    'ask.budget.available': sized.plan.available,
    'ask.budget.turns_kept': sized.plan.turnsKept,
    'ask.budget.turns_dropped': sized.plan.turnsDropped,
    'ask.budget.context_kept': sized.plan.contextKept,
    'ask.budget.context_dropped': sized.plan.contextDropped,
  };
}
