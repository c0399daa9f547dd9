import type { SummariseJobData, SynthesizeJobData } from '@ask/ask-contracts';
import type { PromptPlan } from '@ask/context-budget';
import type { HistoryPair } from '@ask/persistence';
import type { KnownSession } from '../../memory/summary.service';
import type { SynthesisDeps, Turn } from './turn';

/**
 * The summary job of a stored pair: `evictedUpTo` is the newest pair the session summary must take
 * over, as the planner named it (`PromptPlan.evictedUpTo`), null for none.
 */
export function summaryJobOf(
  data: Pick<SynthesizeJobData, 'projectId' | 'sessionId' | 'askId'>,
  messageId: string,
  plan: Pick<PromptPlan, 'evictedUpTo'>,
): SummariseJobData {
  return {
    projectId: data.projectId,
    sessionId: data.sessionId,
    messageId,
    askId: data.askId,
    evictedUpTo: plan.evictedUpTo,
  };
}

/**
 * The remember stage, after `done`, with memory on: the summary of the stored pair (never delays or
 * fails the reply). With the built-in extractive summariser (no upstream call:
 * `SummaryService.summarisesInline`) it runs here, through the same `SummaryService.summarise` as the
 * `ask-memory` job, on what this run read (no second read of the project and the session, the stored
 * pair appended); a provider summariser, or an inline run that hit an infrastructure error, gets the
 * job. A lost enqueue only means that pair has no summary, and the planner then treats it as trimming does.
 */
export async function rememberTurn(
  deps: Pick<SynthesisDeps, 'summaryService' | 'summaryQueue' | 'logger'>,
  turn: Pick<Turn, 'data' | 'project' | 'session'>,
  stored: HistoryPair,
  plan: Pick<PromptPlan, 'evictedUpTo'>,
): Promise<void> {
  const { data, session } = turn;
  const pairs = session.pairs.some((m) => m.id === stored.id) ? session.pairs : [...session.pairs, stored];
  const known: KnownSession = { project: turn.project, pairs, turnSummaries: session.turnSummaries };
  const job = summaryJobOf(data, stored.id, plan);
  if (deps.summaryService?.summarisesInline(known.project)) {
    try {
      const result = await deps.summaryService.summarise(job, known);
      deps.logger.debug(`ask ${data.askId}: turn summary ${result.turn}, session summary ${result.session}`);
      return;
    } catch (err) {
      deps.logger.warn(`ask ${data.askId}: inline summary failed, enqueued instead: ${(err as Error).message}`);
    }
  }
  if (!deps.summaryQueue) return;
  try {
    await deps.summaryQueue.enqueue(job);
  } catch (err) {
    deps.logger.warn(`ask ${data.askId}: summary job not enqueued: ${(err as Error).message}`);
  }
}
