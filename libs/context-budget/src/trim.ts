/** One earlier question/answer pair of the session, with its stored token counts. */
export interface HistoryTurn {
  /** The stored message id of the pair. */
  id: string;
  /** Tokens of the question text, without framing. */
  questionTokens: number;
  /** Tokens of the answer text, without framing. */
  answerTokens: number;
}

/** Kinds of retrieved context. `rag` in a 413's details counts insights and recommendations. */
export type ContextKind = 'insight' | 'recommendation' | 'knowledge';

/** One retrieved item as the planner sees it. */
export interface ContextItemCost {
  id: string;
  kind: ContextKind;
  /** Cosine similarity; higher is more relevant. */
  score: number;
  /**
   * The item's relevance evidence (ask-contracts `itemRelevance`), which the relevance floor applies
   * to; absent: the floor applies to `score`.
   */
  relevance?: number;
  /** Tokens of the item's rendered text (`renderContextItem`), separator included. */
  tokens: number;
}

/** What `trimHistory` keeps. */
export interface TrimmedHistory {
  /** Kept pairs, oldest → newest: always a suffix of the session. */
  kept: HistoryTurn[];
  /** Tokens of the kept pairs with their framing. */
  tokens: number;
}

/**
 * Seed 000 "How trimming works": walks the pairs newest → oldest and keeps the longest suffix of whole
 * pairs that fits `budget`, stopping at the first pair that does not (an old oversize answer hides
 * everything older than it). Pairs only: an answer never goes without its question.
 *
 * @param history pairs oldest → newest.
 * @param budget tokens the history may use (≤ 0 keeps nothing).
 * @param perMessageTokens framing tokens per message; a pair is two messages.
 * @param maxPairs optional cap on kept pairs (seed 001's `maxHistoryMessages` / 2, rounded down).
 */
export function trimHistory(
  history: readonly HistoryTurn[],
  budget: number,
  perMessageTokens = 0,
  maxPairs = Infinity,
): TrimmedHistory {
  let tokens = 0;
  let first = history.length;
  while (first > 0 && history.length - first < maxPairs) {
    const turn = history[first - 1];
    const cost = turn.questionTokens + turn.answerTokens + 2 * perMessageTokens;
    if (tokens + cost > budget) break;
    tokens += cost;
    first -= 1;
  }
  return { kept: history.slice(first), tokens };
}

/** What `shrinkContext` keeps. */
export interface ShrunkContext {
  /** Kept items, best first. */
  kept: ContextItemCost[];
  /** Dropped items, best first. */
  dropped: ContextItemCost[];
  /** Tokens of the kept items. */
  tokens: number;
  /** True when the kept items fit `budget`. */
  fits: boolean;
}

/**
 * Orders retrieved items best first (ties keep retrieval order) and, seed 000's second stage, drops
 * the lowest-scoring one until the rest fit `budget` tokens, never below one item (`fits` then says
 * whether that last item fits). Items that fit as they are are all kept.
 */
export function shrinkContext(items: readonly ContextItemCost[], budget: number): ShrunkContext {
  const ranked = items
    .map((item, order) => ({ item, order }))
    .sort((a, b) => b.item.score - a.item.score || a.order - b.order)
    .map(({ item }) => item);
  let tokens = ranked.reduce((sum, item) => sum + item.tokens, 0);
  let keep = ranked.length;
  while (tokens > budget && keep > 1) {
    keep -= 1;
    tokens -= ranked[keep].tokens;
  }
  return { kept: ranked.slice(0, keep), dropped: ranked.slice(keep), tokens, fits: tokens <= budget };
}
