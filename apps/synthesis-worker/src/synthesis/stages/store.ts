import { type BudgetEvent, citedSources } from '@ask/ask-contracts';
import type { SizedPrompt } from '@ask/context-budget';
import { inSpan } from '@ask/observability';
import { SessionNotFoundError, type SessionsRepository, withTransientRetry } from '@ask/persistence';
import type { StreamResult } from './stream';
import { assertCurrent, sessionGone, type SynthesisDeps, type Turn } from './turn';

/** The stored pair as `SessionsRepository.appendMessage` returns it. */
export type StoredPair = Awaited<ReturnType<SessionsRepository['appendMessage']>>;

/**
 * The store stage: the question/answer pair once per ask (keyed by the ask id), with its counts under
 * the planning counter, the provider's usage, the `budget` it was answered under and its sources
 * (one per page). A run that is no longer current stores nothing. When another run stored its answer
 * first, the client is told to discard this run's text (`reset`) and gets the stored answer (`delta`).
 * @throws FencedPublishError when the run is no longer current; AskError 404 when the session was
 *   deleted meanwhile; the database's error after about 3 s of transient faults (`withTransientRetry`).
 */
export async function storeAnswer(
  deps: Pick<SynthesisDeps, 'sessions' | 'events' | 'memory'>,
  turn: Pick<Turn, 'data' | 'run' | 'model' | 'planning' | 'counter'>,
  answered: { sized: SizedPrompt; budget: BudgetEvent; result: StreamResult },
): Promise<{ stored: StoredPair; sources: ReturnType<typeof citedSources> }> {
  const { data, run, model } = turn;
  const { result } = answered;
  const answer = result.text;
  // One entry per page (its best chunk first), not one per chunk.
  const sources = citedSources(answered.sized.keptItems);
  // A run that is no longer current stores nothing (the current run stores its own answer).
  await assertCurrent(deps.events, data.askId, run);
  const stored = await inSpan('ask.store', {}, () =>
    appendOrSessionGone(deps.sessions, {
      projectId: data.projectId,
      sessionId: data.sessionId,
      askId: data.askId,
      question: data.question,
      answer,
      tokenCounts: deps.memory.countsToStore({ ...turn.planning, counter: turn.counter }, data.question, answer),
      promptTokens: result.promptTokens,
      completionTokens: result.completionTokens,
      provider: model.provider,
      model: model.model,
      // What the live view showed for this turn, kept for a reopened session.
      budget: answered.budget,
      sources,
    }),
  );
  if (!stored.inserted && stored.message.answer !== answer) {
    // Another run stored its answer first: what the client keeps must be the stored answer.
    await deps.events.publish(
      data.askId,
      'reset',
      { attempt: run.claim.run, reason: 'another run stored its answer first; resending it' },
      run.claim,
    );
    await deps.events.publish(data.askId, 'delta', { text: stored.message.answer }, run.claim);
  }
  return { stored, sources };
}

/**
 * Stores the pair; a session deleted meanwhile is a typed 404 (never retried: it will not come back).
 * The answer is paid for by now: a saturated or restarting database is waited out for about 3 s
 * (`withTransientRetry`) before the attempt fails, rather than failing it into a second paid call.
 */
async function appendOrSessionGone(
  sessions: SessionsRepository,
  input: Parameters<SessionsRepository['appendMessage']>[0],
): Promise<StoredPair> {
  try {
    return await withTransientRetry(() => sessions.appendMessage(input));
  } catch (err) {
    if (err instanceof SessionNotFoundError) throw sessionGone(input.sessionId);
    throw err;
  }
}
