import {
  type BudgetItemReason,
  type LowRelevancePolicy,
  relevanceRule,
  type RetrievalMethod,
} from '@ask/ask-contracts';
import type { ContextItemCost } from './trim';

/** The relevance floor a plan applies: items whose relevance evidence is below `floor` are low-relevance. */
export interface RelevancePolicy {
  /**
   * The evidence below which an item is low-relevance: the item's `relevance` when it carries one
   * (ask-contracts `itemRelevance`), else its cosine `score`.
   */
  floor: number;
  /**
   * The weight of the cosine in an item's evidence (ask-contracts `AbstainRule.cosineWeight`): with
   * it, `sizePrompt` gives every retrieved item the retrieval's evidence (`relevanceEvidence`, the best
   * item's), so the floor judges the retrieval as a whole. Absent: the floor is on each item's score.
   */
  cosineWeight?: number;
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
 * The relevance floor for a project's embedding model and retrieval method: the threshold of the one
 * relevance judgement (ask-contracts `ABSTAIN_RULES`, `relevanceRule`: fitted on the fit corpora, the
 * rule `ask eval` and the local stand-in's abstain use). It judges the retrieval as a whole: when no
 * item's evidence (its idf-weighted coverage of the question) reaches it, nothing relevant was found
 * and every item is low-relevance (after memory, or left out with `lowRelevance: never`); otherwise
 * every item is relevant. Judged per item instead, answering chunks of lower coverage than the best
 * one went after memory: 32/35 and 33/35 knowledge answers in bench/memory --kb (per-turn,
 * compaction) against 35/35 with memory off. Undefined (no floor: every item relevant) under the
 * vector method alone (no full-text evidence) or for an embedder without a rule.
 */
export function relevanceFloor(
  embeddingModel: string | undefined,
  method: RetrievalMethod,
): { floor: number; cosineWeight: number } | undefined {
  const rule = relevanceRule(embeddingModel, method);
  return rule ? { floor: rule.below, cosineWeight: rule.cosineWeight } : undefined;
}
