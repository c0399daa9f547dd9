import type { RetrievedItem } from '@ask/ask-contracts';

/**
 * The k of reciprocal rank fusion: an item at rank r of a leg earns weight ÷ (k + r). 60 is the
 * value of Cormack, Clarke and Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and
 * individual Rank Learning Methods" (SIGIR 2009), used unchanged by most hybrid search engines.
 */
export const RRF_K = 60;

/** Weights of the two legs in {@link fuseRankings}. */
export interface FusionWeights {
  vector: number;
  fulltext: number;
}

/**
 * Weighted reciprocal rank fusion of the vector and full-text rankings of one question.
 *
 * Each item's fused score is Σ weight_leg ÷ (60 + rank_leg) over the legs that found it; a leg that
 * found nothing (the full-text leg abstains when no word of the question matches) contributes
 * nothing, so the result is then the other leg's order. Items are matched by kind and id; ties on
 * the fused score go to the higher cosine `score`, then kind and id.
 * @param vector the vector leg, best first (its items' `score` is their cosine similarity).
 * @param fulltext the full-text leg, best first, each with `legs.fulltext`.
 * @returns at most `topK` items, best first, each with `legs` naming the legs that found it, its
 *   rank and score in each, and the fused score.
 */
export function fuseRankings(
  vector: readonly RetrievedItem[],
  fulltext: readonly RetrievedItem[],
  weights: FusionWeights,
  topK: number,
): RetrievedItem[] {
  const merged = new Map<string, RetrievedItem>();
  vector.forEach((item, i) => {
    merged.set(`${item.kind}:${item.id}`, {
      ...item,
      legs: { vector: { rank: i + 1, score: item.score }, fused: weights.vector / (RRF_K + i + 1) },
    });
  });
  fulltext.forEach((item, i) => {
    const key = `${item.kind}:${item.id}`;
    const rank = i + 1;
    const textScore = item.legs?.fulltext?.score ?? 0;
    const share = weights.fulltext / (RRF_K + rank);
    const seen = merged.get(key);
    if (seen?.legs) {
      seen.legs = { ...seen.legs, fulltext: { rank, score: textScore }, fused: (seen.legs.fused ?? 0) + share };
    } else {
      merged.set(key, { ...item, legs: { fulltext: { rank, score: textScore }, fused: share } });
    }
  });
  return [...merged.values()]
    .sort(
      (a, b) =>
        (b.legs?.fused ?? 0) - (a.legs?.fused ?? 0) ||
        b.score - a.score ||
        a.kind.localeCompare(b.kind) ||
        a.id.localeCompare(b.id),
    )
    .slice(0, topK);
}
