import type { SynthesizeJobData } from '@ask/ask-contracts';
import { replayStoredAnswer } from '@ask/event-stream';
import type { Run, SynthesisDeps } from './turn';

/**
 * Claims the ask for this run ({@link AskEventStream.claim}): every event the run publishes carries
 * the claim, so once a later run claims the ask, or the ask ends, this run's next publish is refused.
 * @returns the run, or undefined (logged) when the ask's Redis keys are gone (expired, or lost with
 *   Redis): nothing to run, the reconciler re-opens or ends the ask.
 */
export async function claimRun(
  deps: Pick<SynthesisDeps, 'events' | 'logger'>,
  askId: string,
  lockLost?: AbortSignal,
): Promise<Run | undefined> {
  const claim = await deps.events.claim(askId);
  if (claim) return { claim, lockLost };
  deps.logger.warn(`ask ${askId}: no meta in Redis, nothing to run`);
  return undefined;
}

/**
 * Before a re-run (a retried attempt, or a later claim of the ask) plans anything: an ask that already
 * ended stays ended, a stored pair is resent ({@link finishIfAlreadyStored}), and text an earlier run
 * streamed is discarded with `reset` ({@link resetIfStreamed}). A first run does nothing here.
 * @returns `finished` when the ask needs no answer from this run, `answer` otherwise.
 */
export async function resumeRun(
  deps: Pick<SynthesisDeps, 'events' | 'sessions'>,
  data: SynthesizeJobData,
  run: Run,
  attempt: number,
): Promise<'finished' | 'answer'> {
  if (attempt <= 1 && run.claim.run <= 1) return 'answer';
  if (await finishIfAlreadyStored(deps, data, run)) return 'finished';
  await resetIfStreamed(deps, data.askId, attempt, run);
  return 'answer';
}

/**
 * An ask that already ended (`done` or `error` in its stream) is left as it is; a retried job whose
 * pair is already stored ends with `done` (no second pair, no second answer, no provider call):
 * `reset`, the stored answer, `done` ({@link replayStoredAnswer}).
 * @returns false when the ask is open and nothing is stored for it (the run goes on).
 */
export async function finishIfAlreadyStored(
  deps: Pick<SynthesisDeps, 'events' | 'sessions'>,
  data: Pick<SynthesizeJobData, 'askId' | 'projectId'>,
  run: Run,
): Promise<boolean> {
  const events = await deps.events.readAll(data.askId);
  if (events.some((e) => e.type === 'done' || e.type === 'error')) return true;
  const stored = await deps.sessions.findByAsk(data.projectId, data.askId);
  if (!stored) return false;
  await replayStoredAnswer(deps.events, data.askId, stored, run.claim);
  return true;
}

/** Before a retried attempt streams, tells clients to discard text an earlier attempt streamed (`reset`). */
export async function resetIfStreamed(
  deps: Pick<SynthesisDeps, 'events'>,
  askId: string,
  attempt: number,
  run: Run,
): Promise<void> {
  const events = await deps.events.readAll(askId);
  const lastReset = events.map((e) => e.type).lastIndexOf('reset');
  if (events.slice(lastReset + 1).some((e) => e.type === 'delta' || e.type === 'budget')) {
    await deps.events.publish(askId, 'reset', { attempt, reason: 'the worker restarted this answer' }, run.claim);
  }
}
