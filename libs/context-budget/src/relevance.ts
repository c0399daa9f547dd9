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
 * retrieved item is taken for one that does not answer the question. Sources:
 * - `local-lexical-v1`: fitted per method by bench/relevance (bench/RESULTS.md, "Relevance floor per
 *   embedder and retrieval method"), on the even questions of bench/retrieval/questions.jsonl over
 *   the PostgreSQL manual, checked on the odd ones.
 * - `use-lite-512`: the stand-in's abstain threshold (bench/retrieval, "Abstain threshold of the
 *   stand-in, per embedder"), fitted on the best item under hybrid 1 / 1 only; the same value is used
 *   for the other methods until bench/relevance is run with the semantic embedder (~25 min ingestion).
 * An embedder without an entry has no floor: every item counts as relevant (the seed's plan).
 */
export const RELEVANCE_FLOORS: Readonly<Record<string, Readonly<Record<RetrievalMethod, number>>>> = {
  'local-lexical-v1': { vector: 0.175, fulltext: 0.175, hybrid: 0.175 },
  'use-lite-512': { vector: 0.61, fulltext: 0.61, hybrid: 0.61 },
};

/**
 * The relevance floor for a project's embedding model and retrieval method, or undefined (no floor:
 * every item relevant) for an embedder nobody has measured.
 */
export function relevanceFloor(embeddingModel: string | undefined, method: RetrievalMethod): number | undefined {
  return embeddingModel === undefined ? undefined : RELEVANCE_FLOORS[embeddingModel]?.[method];
}
