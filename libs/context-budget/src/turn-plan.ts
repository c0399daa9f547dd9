import { AskErrorCode, isAskError, questionOverflow, settingsOverflow } from '@ask/ask-errors';
import { sizeBareRequest } from './bare-request';
import { budgetShortfall } from './budget';
import { type SizableTurn, type SizedPrompt, type SizingInput, sizePrompt } from './size-prompt';

/**
 * What one turn is planned with, every time it is planned: the sizer's input without the window and
 * scale of a re-plan ({@link PlanAt}).
 */
export type TurnPlanInput<T extends SizableTurn = SizableTurn> = Omit<SizingInput<T>, 'windowOverride' | 'scale'>;

/** Where a re-plan plans: a window below the model's (tokens) and a factor ≥ 1 on every count. */
export interface PlanAt {
  window?: number;
  scale?: number;
}

/** What a provider disclosed when it refused a request as too large (tokens; either may be absent). */
export interface DisclosedOverflow {
  /** The window or limit it named. */
  limit?: number;
  /** Its own count of the refused prompt. */
  promptTokens?: number;
}

/**
 * Plans the turn at `at` (the model's window and scale 1 by default): `sizePrompt` over `input`.
 * @throws AskError 413 `context_overflow` when even the question with one item cannot fit.
 */
export function planTurn<T extends SizableTurn>(input: TurnPlanInput<T>, at: PlanAt = {}): SizedPrompt<T> {
  return sizePrompt({ ...input, windowOverride: at.window, scale: at.scale });
}

/**
 * True when a first plan's refusal should send the bare request instead of a 413: the count is
 * approximate (it may be several times the provider's, an uncalibrated script) and the refusal is the
 * plan's `context_overflow`. An exact count's refusal, or any other error, stands.
 */
export function sendsBareRequest(err: unknown, exact: boolean): boolean {
  return !exact && isAskError(err) && err.code === AskErrorCode.ContextOverflow;
}

/** The bare request of the turn (system prompt + question + `max_tokens`, `sizeBareRequest`), with the approximate count. */
export function planBareTurn<T extends SizableTurn>(input: TurnPlanInput<T>): SizedPrompt<T> {
  return sizeBareRequest({
    model: input.model,
    counter: input.counter,
    exact: false,
    maxTokens: input.maxTokens,
    systemPrompt: input.systemPrompt,
    question: input.question,
    history: input.history,
    items: input.items,
    ...(input.safetyMargin ? { safetyMargin: input.safetyMargin } : {}),
  });
}

/**
 * `marginPercent`: the smallest margin the project's calibrated estimate can plan with
 * (`ScriptCalibratedCounter.lowestMarginPercent`); absent, the seed's.
 * @throws AskError 413 `context_overflow` (`settingsOverflow`) when `maxTokens` + reserve + margin
 *   leave no token of `window` for the question (all tokens).
 */
export function assertFits(
  model: string,
  window: number,
  maxTokens: number,
  exact: boolean,
  marginPercent?: number,
): void {
  const shortfall = budgetShortfall({ window, maxTokens, exact, marginPercent });
  if (shortfall) throw settingsOverflow({ model, ...shortfall });
}

/**
 * The window and scale of the one re-plan after an overflow (tokens; scale a factor ≥ 1):
 *
 * - the provider disclosed its prompt count: scale every count by (its count ÷ our planned count),
 *   on top of the scale already applied, so the retry is sized in the provider's own tokens;
 * - it disclosed a window (or a per-minute limit) below ours: plan against it;
 * - it disclosed neither anything smaller nor a count: 10% below the window.
 *
 * Never `window − 1` with the same counts: that resends the same request.
 */
export function replanFigures(
  sized: Pick<SizedPrompt, 'window' | 'scale' | 'plan'>,
  overflow: DisclosedOverflow,
): { window: number; scale: number } {
  const limit =
    overflow.limit !== undefined && overflow.limit > 0 && overflow.limit < sized.window ? overflow.limit : undefined;
  const ratio =
    overflow.promptTokens !== undefined && sized.plan.used > 0 ? overflow.promptTokens / sized.plan.used : undefined;
  if (ratio !== undefined && ratio > 1) return { window: limit ?? sized.window, scale: sized.scale * ratio };
  if (limit !== undefined) return { window: limit, scale: sized.scale };
  return { window: Math.floor(sized.window * 0.9), scale: sized.scale };
}

/**
 * Where to re-plan after the provider's count endpoint counted the assembled request at `exactTokens`
 * (its tokens): undefined when `exactTokens + maxTokens` fits the window less the margin, else the
 * same window with the observed ratio (its count ÷ our planned count, at least 1) on top of the scale.
 */
export function rescaleAfterCount(
  sized: Pick<SizedPrompt, 'window' | 'scale' | 'plan'>,
  exactTokens: number,
  maxTokens: number,
): { window: number; scale: number } | undefined {
  if (exactTokens + maxTokens <= sized.window - sized.plan.margin) return undefined;
  return { window: sized.window, scale: Math.max(1, exactTokens / Math.max(1, sized.plan.used)) * sized.scale };
}

/**
 * The 413 of a bare request the provider refused: the question's size in the provider's tokens when
 * it disclosed the request's (its share of our count of the bare request), else our count.
 */
export function questionOverflowOf(
  model: string,
  sized: Pick<SizedPrompt, 'window' | 'plan' | 'figures'>,
  maxTokens: number,
  overflow: DisclosedOverflow,
) {
  const prompt = overflow.promptTokens;
  const question =
    prompt !== undefined && sized.plan.used > 0
      ? Math.round((prompt * sized.figures.question) / sized.plan.used)
      : sized.figures.question;
  return questionOverflow({
    model,
    window: sized.window,
    maxTokens,
    question,
    ...(prompt !== undefined ? { prompt } : {}),
  });
}
