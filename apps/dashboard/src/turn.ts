import {
  type AskEventMap,
  type AskEventType,
  type BudgetEvent,
  citedSources,
  type DoneEvent,
  type ErrorEvent,
} from '@ask/ask-contracts';

/** One question and what the page knows of its answer. */
export interface Turn {
  question: string;
  askId: string | null;
  /** The answer text: the deltas after the last `reset`, in order. */
  answer: string;
  status: 'pending' | 'streaming' | 'done' | 'error';
  /** The latest `budget` event (a second one replaces the first when the prompt was planned again). */
  budget: BudgetEvent | null;
  sources: DoneEvent['sources'];
  error: ErrorEvent | null;
  /** Ids of the events already applied: a replayed event (same id) is ignored, so no word repeats. */
  seen: Set<string>;
}

export function newTurn(question: string): Turn {
  return {
    question,
    askId: null,
    answer: '',
    status: 'pending',
    budget: null,
    sources: [],
    error: null,
    seen: new Set(),
  };
}

/**
 * A finished turn read back from the session, with the budget and sources stored with its answer
 * (null and `[]` for answers stored before they were kept), so it reads as it did live. The sources
 * are listed one per page (`citedSources`, the best chunk first): answers stored before the service
 * grouped them list a page once per chunk.
 */
export function storedTurn(
  question: string,
  answer: string,
  askId: string,
  budget: BudgetEvent | null = null,
  sources: DoneEvent['sources'] = [],
): Turn {
  return { ...newTurn(question), askId, answer, status: 'done', budget, sources: citedSources(sources) };
}

/**
 * Applies one SSE event to the turn. `id` is the event's stream id; an id seen before is skipped
 * (EventSource resumes after `Last-Event-ID`, so this only guards against a replay). `reset` discards
 * the text so far: the deltas after it restart the answer from its first word.
 * @returns whether the event changed the turn.
 */
export function applyEvent<T extends AskEventType>(turn: Turn, id: string, type: T, data: AskEventMap[T]): boolean {
  if (turn.status === 'done' || turn.status === 'error') return false;
  if (id) {
    if (turn.seen.has(id)) return false;
    turn.seen.add(id);
  }
  switch (type) {
    case 'accepted':
    case 'retrieved':
      turn.status = 'streaming';
      return true;
    case 'budget':
      turn.status = 'streaming';
      turn.budget = data as BudgetEvent;
      return true;
    case 'delta':
      turn.status = 'streaming';
      turn.answer += (data as AskEventMap['delta']).text;
      return true;
    case 'reset':
      turn.answer = '';
      return true;
    case 'done':
      turn.status = 'done';
      turn.sources = citedSources((data as DoneEvent).sources ?? []);
      return true;
    case 'error':
      turn.status = 'error';
      turn.error = data as ErrorEvent;
      return true;
    default:
      return false;
  }
}

/** Ends the turn with an error that did not come from the service (refused POST, lost stream). */
export function failTurn(turn: Turn, error: ErrorEvent): void {
  turn.status = 'error';
  turn.error = error;
}
