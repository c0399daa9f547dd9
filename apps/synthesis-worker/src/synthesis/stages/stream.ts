import type { ChatRequest } from '@ask/llm-providers';
import { AskErrorCode, contextOverflow } from '@ask/ask-errors';
import type { BudgetEvent } from '@ask/ask-contracts';
import { questionOverflowOf, type SizedPrompt } from '@ask/context-budget';
import { FencedPublishError } from '@ask/event-stream';
import { classifyUpstreamError, type RetryNotice, streamWithRetry, toAskError } from '@ask/llm-providers';
import type { HistoryPair } from '@ask/persistence';
import type { CallScope } from '../call-ledger';
import { DeltaCoalescer } from '../delta-coalescer';
import { publishBudget } from './budget';
import { learnFromOverflow } from './learn';
import { replanAfterOverflow } from './plan';
import type { Overflow, SynthesisDeps, Turn } from './turn';

/** One streamed call's outcome: its text and usage (tokens, null when the provider reported none), or the overflow to re-plan. */
export interface StreamResult {
  text: string;
  promptTokens: number | null;
  completionTokens: number | null;
  overflow?: Overflow;
}

/** An answered turn: the plan it was answered under, its `budget` event and the call's outcome. */
export interface Answered {
  sized: SizedPrompt<HistoryPair>;
  budget: BudgetEvent;
  result: StreamResult;
}

type StreamDeps = Pick<SynthesisDeps, 'ledger' | 'events' | 'config' | 'logger' | 'memory'>;

/**
 * The stream stage: one call with streaming, its text published as coalesced deltas (the first at
 * once, then every `SYNTHESIS_DELTA_INTERVAL_MS`, 25 by default, or 1,024 characters: `DeltaCoalescer`),
 * one `chat` row per attempt in the call ledger.
 * @returns the text and usage, or the overflow to re-plan when the provider refused before any text.
 * @throws FencedPublishError when another run owns the ask or the job's lock was lost (the call is
 *   aborted); AskError 413 for an overflow after text was streamed, else the classified upstream error.
 */
export async function streamAnswer(
  deps: Omit<StreamDeps, 'memory'>,
  turn: Pick<Turn, 'data' | 'run' | 'model' | 'provider' | 'maxTokens'>,
  sized: SizedPrompt,
  signal: AbortSignal,
  call: CallScope,
): Promise<StreamResult> {
  const { model, run } = turn;
  const askId = call.askId;
  const request: ChatRequest = { model: model.model, messages: sized.messages, maxTokens: turn.maxTokens, signal };
  let text = '';
  let promptTokens: number | null = null;
  let completionTokens: number | null = null;
  const meter = await deps.ledger.start({
    ...call,
    operation: 'chat',
    provider: model.provider,
    requestedModel: model.model,
    plannedTokens: sized.plan.used,
  });
  const deltas = new DeltaCoalescer(
    async (piece) => void (await deps.events.publish(askId, 'delta', { text: piece }, run.claim)),
    undefined,
    deps.config.SYNTHESIS_DELTA_INTERVAL_MS,
  );
  try {
    // Each attempt streamWithRetry makes is an upstream call of its own: a failed one is its own row.
    const onRetry = ({ failure, delayMs }: RetryNotice) => meter.retried(toAskError(failure).code, delayMs);
    for await (const chunk of streamWithRetry(turn.provider, request, { signal, onRetry })) {
      meter.firstChunk();
      if (chunk.type === 'delta') {
        if (!chunk.text) continue;
        text += chunk.text;
        // Refused once another run owns the ask: leaving the loop aborts the provider call.
        await deltas.push(chunk.text);
      } else {
        meter.usage(chunk);
        promptTokens = chunk.promptTokens;
        completionTokens = chunk.completionTokens;
      }
    }
    await deltas.flush();
  } catch (err) {
    deltas.discard();
    // A run stopped (another run owns the ask, or the job's lock was lost): the call ended without an answer.
    if (err instanceof FencedPublishError) {
      await meter.finish(null, 'aborted');
      throw err;
    }
    // The worker lost the job's lock: the call was aborted because this run must stop, not a timeout.
    if (run.lockLost?.aborted) {
      await meter.finish(null, 'aborted');
      throw new FencedPublishError(askId, 'superseded');
    }
    const failure = classifyUpstreamError(err, model.provider);
    if (failure.kind === 'overflow' && text === '') {
      await meter.finish(AskErrorCode.ContextOverflow);
      return { text, promptTokens, completionTokens, overflow: failure };
    }
    deps.logger.warn(
      `ask ${askId}: ${model.provider}/${model.model} failed (${failure.kind}) after ${sized.plan.used} planned tokens`,
    );
    const error =
      failure.kind === 'overflow'
        ? contextOverflow({ model: model.model, window: sized.window, ...sized.figures })
        : toAskError(failure);
    await meter.finish(error.code);
    throw error;
  }
  await meter.finish(null);
  return { text, promptTokens, completionTokens };
}

/**
 * The overflow branch, taken once when the provider refused the answer call as too large: learn what
 * it disclosed, then
 * - the bare request was refused: the question alone is too large, a 413 naming its size;
 * - the plan was already re-planned once (after the count endpoint): a 413 with the figures;
 * - else re-plan with the disclosure (`replanAfterOverflow`), publish the new `budget`, and call once
 *   more (`overflow_retry`); refused again, a 413 with the figures.
 * @throws AskError 413 `context_overflow` as above.
 */
export async function recoverFromOverflow(
  deps: StreamDeps,
  turn: Turn,
  refused: { sized: SizedPrompt<HistoryPair>; overflow: Overflow; bare: boolean; replanned: boolean },
  signal: AbortSignal,
  call: (purpose: CallScope['purpose']) => CallScope,
): Promise<Answered> {
  const { model, maxTokens } = turn;
  await learnFromOverflow(deps, turn, refused.sized, refused.overflow);
  if (refused.bare) throw questionOverflowOf(model.model, refused.sized, maxTokens, refused.overflow);
  if (refused.replanned)
    throw contextOverflow({ model: model.model, window: refused.sized.window, ...refused.sized.figures });
  const sized = replanAfterOverflow(turn, refused.sized, refused.overflow);
  const budget = await publishBudget(deps.events, turn, sized);
  const result = await streamAnswer(deps, turn, sized, signal, call('overflow_retry'));
  if (result.overflow) {
    await learnFromOverflow(deps, turn, sized, result.overflow);
    throw contextOverflow({ model: model.model, window: sized.window, ...sized.figures });
  }
  return { sized, budget, result };
}
