import type { TraceContext } from '@ask/ask-contracts';
import { withLogIds } from './json-logger';
import { inJobSpan, messagingAttributes } from './tracing';

/** What {@link inAskJob} reads of an ask job (BullMQ's `Job` of the retrieval or synthesis queue). */
export interface AskJobLike {
  data: { askId: string; sessionId: string; projectId: string; trace?: TraceContext };
  /** Attempts made before this one (BullMQ's `attemptsMade`): the span's `ask.attempt` is this + 1. */
  attemptsMade: number;
}

/**
 * Runs an ask job's handler the same way in every ask worker: every log line it writes carries the
 * ask, session and project ids ({@link withLogIds}), and with tracing on it runs inside the job's
 * `<queue> process` consumer span, a child of the producer's send span (the trace the job carries),
 * with the messaging attributes, the three ids and the attempt. Returns what `fn` returns; rethrows
 * what it throws.
 */
export function inAskJob<T>(queue: string, job: AskJobLike, fn: () => Promise<T>): Promise<T> {
  const { askId, sessionId, projectId } = job.data;
  return withLogIds({ askId, sessionId, projectId }, () =>
    inJobSpan(
      `${queue} process`,
      job.data.trace,
      () => ({
        ...messagingAttributes(queue, askId),
        'ask.id': askId,
        'ask.session.id': sessionId,
        'ask.project.id': projectId,
        'ask.attempt': job.attemptsMade + 1,
      }),
      fn,
    ),
  );
}
