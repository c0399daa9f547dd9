/**
 * Test and bench support (not exported from the lib): packs requests from sessions the way the seed's
 * budget does, with any counter, so the request-level test can count each packed request with every
 * reference tokenizer. The real planner lives in libs/context-budget; this is the seed's formula only:
 *
 *   available = window − max_tokens − reserve − ⌈margin × window⌉
 *
 * and the longest suffix of whole question/answer pairs that fits with the current question.
 */
import type { ChatMessage, TokenCounter } from '../token-counter';
import type { CorpusSession, TextKind } from './corpus';

export interface Budget {
  /** Context window, tokens. */
  window: number;
  /** Reserved for generation, tokens. */
  maxTokens: number;
  /** Flat reserve for the system prompt and scaffolding, tokens. */
  reserve: number;
  /** Safety margin as a fraction of the window (0.15 approximate, 0.05 exact). */
  margin: number;
}

/** available = window − max_tokens − reserve − ⌈margin × window⌉ (tokens). */
export function available(budget: Budget): number {
  return budget.window - budget.maxTokens - budget.reserve - Math.ceil(budget.margin * budget.window);
}

export interface PackedRequest {
  sessionId: string;
  kind: TextKind;
  /** Index of the current question in the session. */
  turn: number;
  /** The budget it was packed to. */
  budget: Budget;
  /** Messages after the system prompt: kept pairs, then the question. */
  messages: ChatMessage[];
  /** The packing counter's figure for `messages` (framing included), ≤ available(budget). */
  estimated: number;
  keptPairs: number;
}

/**
 * One request per turn of every session (turn ≥ 1): the current question plus the longest suffix of
 * earlier pairs whose estimate fits `available(budget)`. A question that alone does not fit is skipped
 * (the planner answers 413). `countText` is memoised per text by the caller's counter.
 */
export function packRequests(
  sessions: readonly CorpusSession[],
  counter: TokenCounter,
  budget: Budget,
): PackedRequest[] {
  const limit = available(budget);
  const cache = new Map<string, number>();
  const count = (text: string) => {
    let n = cache.get(text);
    if (n === undefined) {
      n = counter.countText(text);
      cache.set(text, n);
    }
    return n;
  };
  const out: PackedRequest[] = [];
  for (const session of sessions) {
    for (let turn = 1; turn < session.turns.length; turn++) {
      const question = session.turns[turn].question;
      let used = counter.perRequestTokens + count(question) + counter.perMessageTokens;
      if (used > limit) continue;
      let first = turn;
      while (first > 0) {
        const pair = session.turns[first - 1];
        const cost = count(pair.question) + count(pair.answer) + 2 * counter.perMessageTokens;
        if (used + cost > limit) break;
        used += cost;
        first--;
      }
      const messages: ChatMessage[] = [];
      for (let i = first; i < turn; i++) {
        messages.push({ role: 'user', content: session.turns[i].question });
        messages.push({ role: 'assistant', content: session.turns[i].answer });
      }
      messages.push({ role: 'user', content: question });
      out.push({
        sessionId: session.id,
        kind: session.kind,
        turn,
        budget,
        messages,
        estimated: used,
        keptPairs: turn - first,
      });
    }
  }
  return out;
}

/** The system prompt every packed request carries; it must fit the 600-token reserve under every tokenizer. */
export const PACKING_SYSTEM_PROMPT =
  'You are the Ask assistant for a software project. Answer the question using the conversation so far ' +
  'and the retrieved context. Cite the items you use by their id. If the context does not contain the ' +
  'answer, say so plainly instead of guessing. Answer in the language of the question.';

/**
 * Tokens of a packed request under a reference counter, system prompt and framing included, with the
 * reference's per-text counts memoised in `cache` (shared across requests and budgets).
 */
export function trueRequestTokens(request: PackedRequest, reference: TokenCounter, cache: Map<string, number>): number {
  const count = (text: string) => {
    let n = cache.get(text);
    if (n === undefined) {
      n = reference.countText(text);
      cache.set(text, n);
    }
    return n;
  };
  let total = reference.perRequestTokens + count(PACKING_SYSTEM_PROMPT) + reference.perMessageTokens;
  for (const m of request.messages) total += count(m.content) + reference.perMessageTokens;
  return total;
}
