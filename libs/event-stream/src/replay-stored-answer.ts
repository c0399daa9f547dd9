import type { DoneEvent } from '@ask/ask-contracts';
import type { AskEventStream, RunClaim } from './ask-event-stream';

/** A stored question/answer pair as a replay needs it (persistence's `StoredMessage` fits). */
export interface StoredAnswer {
  /** The stored pair's id (the `done` event's `messageId`). */
  id: string;
  answer: string;
  /** As the provider reported them when the answer was stored; null when it reported none. */
  promptTokens: number | null;
  completionTokens: number | null;
  sources: DoneEvent['sources'];
}

/**
 * Ends an ask whose answer is already stored without calling any provider: publishes `reset` (the
 * client drops whatever text it holds), the stored answer as one `delta`, and `done` with the stored
 * usage and sources. Used by every path that may run a finished ask again (a retried or re-enqueued
 * job, the reconciler after Redis lost the stream), so the stored answer, not a second paid call, is
 * what the client ends with.
 * @param claim the run's claim when a synthesis run replays (fenced like its other events).
 * @throws FencedPublishError when the stream already ended (or `claim` was superseded): nothing more
 *   is published then.
 */
export async function replayStoredAnswer(
  events: Pick<AskEventStream, 'publish'>,
  askId: string,
  stored: StoredAnswer,
  claim?: RunClaim,
): Promise<void> {
  await events.publish(askId, 'reset', { attempt: 0, reason: 'answer already stored; resending it' }, claim);
  await events.publish(askId, 'delta', { text: stored.answer }, claim);
  await events.publish(
    askId,
    'done',
    {
      messageId: stored.id,
      usage: { promptTokens: stored.promptTokens, completionTokens: stored.completionTokens },
      sources: stored.sources,
    },
    claim,
  );
}
