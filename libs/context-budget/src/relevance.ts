import type { BudgetItemReason, LowRelevancePolicy, RetrievalMethod } from '@ask/ask-contracts';
import type { ContextItemCost } from './trim';

/** The relevance floor a plan applies: items whose score is below `floor` are low-relevance. */
export interface RelevancePolicy {
  /** Cosine similarity (the item's `score`) below which an item is low-relevance. */
  floor: number;
  /** The project's `retrievalSettings.lowRelevance`. */
  below: LowRelevancePolicy;
}

/** Why an item was kept or left out (the `budget` event's `items[].reason`; see ask-contracts `BudgetItemReason`). */
export type ItemReason = BudgetItemReason;

/** One item's decision, as the plan and the `budget` event report it. */
export interface ItemDecision {
  id: string;
  kind: ContextItemCost['kind'];
  /** Cosine similarity, as retrieved. */
  score: number;
  /** Tokens of the rendered item. */
  tokens: number;
  kept: boolean;
  reason: ItemReason;
}

/**
 * Relevance floors per embedding model and retrieval method: the cosine similarity below which a
 * retrieved item is taken for one that does not answer the question. `local-lexical-v1`: fitted by
 * bench/relevance (bench/RESULTS.md, "Relevance floor per embedder and retrieval method") on the even
 * questions of bench/retrieval/questions.jsonl over the PostgreSQL manual (the largest floor that keeps
 * every question whose top 8 held an answering chunk; at 95% of them it would be 0.19 / 0.09 / 0.09,
 * which lost 2 of 26 knowledge answers in bench/memory --kb), checked on the odd ones (all kept).
 * The vector leg ranks by cosine, so its items score higher than the items full text finds: one floor
 * for every method (the abstain threshold's mistake under another weighting) would either drop the
 * answers of full text and hybrid or keep everything under vector.
 * Other embedders (`use-lite-512`, remote ones) have not been measured per item: no floor (every item
 * relevant; memory still comes before every item but the floor one). The stand-in's abstain threshold
 * (0.62 for `use-lite-512`) is on the best item and is not a per-item floor.
 */
export const RELEVANCE_FLOORS: Readonly<Record<string, Readonly<Record<RetrievalMethod, number>>>> = {
  'local-lexical-v1': { vector: 0.16, fulltext: 0.04, hybrid: 0.04 },
};

/**
 * The relevance floor for a project's embedding model and retrieval method, or undefined (no floor:
 * every item relevant) for an embedder nobody has measured.
 */
export function relevanceFloor(embeddingModel: string | undefined, method: RetrievalMethod): number | undefined {
  return embeddingModel === undefined ? undefined : RELEVANCE_FLOORS[embeddingModel]?.[method];
}
