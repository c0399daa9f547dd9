import { AskErrorCode } from '@ask/ask-errors';
import { rescaleAfterCount, type SizedPrompt } from '@ask/context-budget';
import { FencedPublishError } from '@ask/event-stream';
import { classifyUpstreamError, countWithRetry, type RetryNotice, toAskError } from '@ask/llm-providers';
import type { HistoryPair } from '@ask/persistence';
import type { CallScope } from '../call-ledger';
import { tracedPlan } from './plan';
import type { Overflow, SynthesisDeps, Turn } from './turn';

/**
 * The verify stage: with a remote exact counter (Anthropic count_tokens, Vertex countTokens), counts
 * the assembled request at the provider; when it would not fit, re-plans once with the observed ratio
 * (the provider's count ÷ ours) as the scale (`rescaleAfterCount`). Without one, `sized` as it is.
 * The count call is classified and retried like a chat call (`countWithRetry`), one `count_tokens`
 * row per attempt in the call ledger.
 * @returns the plan to send, or the overflow the endpoint reported (for the caller's one re-plan).
 * @throws AskError 502 after a rate limit retried within bounds, 504 on a timeout;
 *   FencedPublishError when the worker lost the job's lock meanwhile.
 */
export async function verifyWithCountEndpoint(
  deps: Pick<SynthesisDeps, 'ledger' | 'logger'>,
  turn: Pick<Turn, 'data' | 'run' | 'model' | 'choice' | 'provider' | 'maxTokens' | 'planInput'>,
  sized: SizedPrompt<HistoryPair>,
  signal: AbortSignal,
  call: CallScope,
): Promise<{ sized: SizedPrompt<HistoryPair>; overflow?: Overflow }> {
  const { provider, model } = turn;
  if (!turn.choice.remote || !provider.countRequestTokens) return { sized };
  let exactTokens: number;
  const meter = await deps.ledger.start({
    ...call,
    operation: 'count_tokens',
    provider: model.provider,
    requestedModel: model.model,
    plannedTokens: sized.plan.used,
  });
  try {
    const onRetry = ({ failure, delayMs }: RetryNotice) => meter.retried(toAskError(failure).code, delayMs);
    exactTokens = await countWithRetry(
      provider,
      { model: model.model, messages: sized.messages, maxTokens: turn.maxTokens, signal },
      { signal, onRetry },
    );
  } catch (err) {
    if (turn.run.lockLost?.aborted) {
      await meter.finish(null, 'aborted');
      throw new FencedPublishError(turn.data.askId, 'superseded');
    }
    const failure = classifyUpstreamError(err, model.provider);
    deps.logger.warn(
      `ask ${turn.data.askId}: ${model.provider}/${model.model} count endpoint failed (${failure.kind})`,
    );
    if (failure.kind === 'overflow') {
      await meter.finish(AskErrorCode.ContextOverflow);
      return { sized, overflow: failure };
    }
    const error = toAskError(failure, { cause: err });
    await meter.finish(error.code);
    throw error;
  }
  await meter.finish(null);
  const at = rescaleAfterCount(sized, exactTokens, turn.maxTokens);
  return { sized: at ? tracedPlan(turn.planInput, at) : sized };
}
