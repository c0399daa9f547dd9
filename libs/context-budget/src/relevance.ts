import type { ContextItemCost } from './trim';

/**
 * What happens to a retrieved item scored below the relevance floor (a project setting):
 * - `spare-room`: sent only in room that conversation memory could not use (never displacing a
 *   summary or a verbatim pair);
 * - `never`: not sent at all.
 */
export type BelowFloorPolicy = 'spare-room' | 'never';

/** Policies in the order the API lists them. */
export const BELOW_FLOOR_POLICIES: readonly BelowFloorPolicy[] = ['spare-room', 'never'];

/** The default: items below the floor fill spare room only. */
export const DEFAULT_BELOW_FLOOR: BelowFloorPolicy = 'spare-room';

/** The relevance floor a plan applies: items whose score is below `floor` are low-relevance. */
export interface RelevancePolicy {
  /** Cosine similarity (the item's `score`) below which an item is low-relevance. */
  floor: number;
  below: BelowFloorPolicy;
}

/** Why an item was kept or left out (the `budget` event's `items[].reason`). */
export type ItemReason =
  /** Kept: the best item at or above the floor, which the plan always keeps (seed 000's floor of one). */
  | 'floor'
  /** Kept: at or above the floor, and it fits after the floor item and the coverage of every pair. */
  | 'relevant'
  /** Kept: below the floor, in room conversation memory could not use. */
  | 'spare-room'
  /** Kept: memory `off`, seed 000's plan (every item that fits, RAG shrink lowest score first). */
  | 'fits'
  /** Left out: does not fit after what outranks it (memory `off`: the seed's RAG shrink). */
  | 'no-room'
  /** Left out: below the floor, and sending it would displace memory. */
  | 'below-floor'
  /** Left out: below the floor, and the project sends such items never. */
  | 'excluded';

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
export const RELEVANCE_FLOORS: Readonly<Record<string, Readonly<Record<'vector' | 'fulltext' | 'hybrid', number>>>> = {
  'local-lexical-v1': { vector: 0.175, fulltext: 0.175, hybrid: 0.175 },
  'use-lite-512': { vector: 0.61, fulltext: 0.61, hybrid: 0.61 },
};

/**
 * The relevance floor for a project's embedding model and retrieval method, or undefined (no floor:
 * every item relevant) for an embedder nobody has measured.
 */
export function relevanceFloor(
  embeddingModel: string | undefined,
  method: 'vector' | 'fulltext' | 'hybrid',
): number | undefined {
  return embeddingModel === undefined ? undefined : RELEVANCE_FLOORS[embeddingModel]?.[method];
}
