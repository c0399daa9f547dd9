import type { DoneEvent, SynthesizeJobData } from '@ask/ask-contracts';
import { type AskError, isAskError, toErrorEvent } from '@ask/ask-errors';
import { FencedPublishError } from '@ask/event-stream';
import { askDurationSeconds, asksTotal } from '@ask/observability';
import type { Answered } from './stream';
import type { Run, SynthesisDeps, Turn } from './turn';

/** What the worker does with an infrastructure failure of the attempt (`AttemptInfo.failed`, `JobProcessor.failedAttempt`). */
export type FailedAttempt = (err: unknown, end: (error: AskError) => Promise<unknown>) => Promise<never>;

/** Counts the ask's outcome (`done` or the error code) and observes its duration from `acceptedAt` (seconds). */
function observeEnd(outcome: string, acceptedAt: string): void {
  asksTotal.inc({ outcome });
  askDurationSeconds.observe((Date.now() - Date.parse(acceptedAt)) / 1000);
}

/**
 * Ends the ask with `done`: the stored pair's message id, the provider's usage (tokens), the sources,
 * and the usage check's warning when there is one.
 */
export async function publishDone(
  deps: Pick<SynthesisDeps, 'events'>,
  turn: Pick<Turn, 'data' | 'run'>,
  { result }: Pick<Answered, 'result'>,
  stored: Pick<DoneEvent, 'messageId' | 'sources'>,
  warning?: string,
): Promise<void> {
  const usage = { promptTokens: result.promptTokens, completionTokens: result.completionTokens };
  const done = { messageId: stored.messageId, usage, sources: stored.sources, ...(warning ? { warning } : {}) };
  await deps.events.publish(turn.data.askId, 'done', done, turn.run.claim);
  observeEnd('done', turn.data.acceptedAt);
}

/**
 * Ends the ask with the typed failure `err` of its run: one `error` event with the typed body.
 * @throws `err` when it is not typed (an infrastructure failure, BullMQ retries) or is a fencing refusal.
 */
export async function endWithError(
  deps: Pick<SynthesisDeps, 'events'>,
  data: Pick<SynthesizeJobData, 'askId' | 'acceptedAt'>,
  run: Run,
  err: unknown,
): Promise<void> {
  if (err instanceof FencedPublishError || !isAskError(err)) throw err;
  await deps.events.publish(data.askId, 'error', toErrorEvent(err), run.claim);
  observeEnd(err.code, data.acceptedAt);
}

/**
 * A run stopped by fencing (another run owns the ask, or it ended) resolves `fenced`, logged. Any
 * other failure goes to `failed` (which logs it and, on the job's last attempt, ends the ask with its
 * typed 500 under this run's claim, a fenced publish of it ignored), then is rethrown.
 * @throws `err` unless it is a fencing refusal.
 */
export async function stopOrFail(
  deps: Pick<SynthesisDeps, 'events' | 'logger'>,
  askId: string,
  run: Run,
  err: unknown,
  failed?: FailedAttempt,
): Promise<'fenced'> {
  if (err instanceof FencedPublishError) {
    const lock = run.lockLost?.aborted ? ', job lock lost' : '';
    deps.logger.warn(`ask ${askId}: run ${run.claim.run} stopped (${err.reason}${lock})`);
    return 'fenced';
  }
  if (failed) {
    await failed(err, (error) =>
      deps.events.publish(askId, 'error', toErrorEvent(error), run.claim).catch((fenced) => {
        if (!(fenced instanceof FencedPublishError)) throw fenced;
      }),
    );
  }
  throw err;
}
