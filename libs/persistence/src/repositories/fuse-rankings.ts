import type { RetrievedItem } from '@ask/ask-contracts';

/** Weights of the two legs in {@link fuseRankings}. */
export interface FusionWeights {
  vector: number;
  fulltext: number;
}

/**
 * How many candidates each leg of a hybrid search returns for a fused top-K: three times top-K, at
 * least 30, at most 200 (the repository's largest top-K). A deeper pool than top-K lets an item that
 * one leg ranks low but the other ranks high reach the fused list.
 */
export function fusionDepth(topK: number): number {
  return Math.min(200, Math.max(30, 3 * topK));
}

/**
 * Weighted convex combination of the two legs' normalised scores (Bruch, Gai and Ingber, "An Analysis
 * of Fusion Functions for Hybrid Retrieval", ACM TOIS 2023: a convex combination of normalised scores
 * beats reciprocal rank fusion and is tuned on few questions).
 *
 * Every candidate carries its cosine similarity (`score`: both legs compute it) and, when the
 * full-text leg found it, its BM25 score (`legs.fulltext.score`, and its `coverage`, kept; 0 otherwise). Over the union of
 * both legs' candidates, cosine is min-max normalised to [0, 1] (1 when all are equal) and
 * BM25 divided by the largest one (its theoretical minimum is 0); the fused score is
 * (w_v · cosine_n + w_t · text_n) ÷ (w_v + w_t), in [0, 1] (0 when both weights are 0).
 *
 * Unlike weighted reciprocal rank fusion with k = 60, where a vector weight of 0.5 puts the vector
 * leg's first item (0.5/61) below the full-text leg's 62nd (1/122), the vector leg's best item scores
 * w_v ÷ (w_v + w_t) (1/3 at 0.5 / 1) and so outranks every full-text-only item whose text and cosine
 * evidence is weaker. A full-text leg that found nothing (no word of the question matched) leaves the
 * vector order. Ties go to the higher cosine `score`, then kind and id.
 * @param vector the vector leg, best first (its items' `score` is their cosine similarity).
 * @param fulltext the full-text leg, best first, each with `legs.fulltext` and its cosine `score`.
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
    merged.set(`${item.kind}:${item.id}`, { ...item, legs: { vector: { rank: i + 1, score: item.score } } });
  });
  fulltext.forEach((item, i) => {
    const key = `${item.kind}:${item.id}`;
    const leg = {
      rank: i + 1,
      score: item.legs?.fulltext?.score ?? 0,
      ...(item.legs?.fulltext?.coverage === undefined ? {} : { coverage: item.legs.fulltext.coverage }),
    };
    const seen = merged.get(key);
    if (seen?.legs) seen.legs = { ...seen.legs, fulltext: leg };
    else merged.set(key, { ...item, legs: { fulltext: leg } });
  });
  const items = [...merged.values()];
  const cosines = items.map((i) => i.score);
  const cosMin = Math.min(...cosines);
  const cosRange = Math.max(...cosines) - cosMin;
  const textMax = Math.max(0, ...items.map((i) => i.legs?.fulltext?.score ?? 0));
  const total = weights.vector + weights.fulltext;
  for (const item of items) {
    const cosine = cosRange > 0 ? (item.score - cosMin) / cosRange : 1;
    const text = textMax > 0 ? (item.legs?.fulltext?.score ?? 0) / textMax : 0;
    const fused = total > 0 ? (weights.vector * cosine + weights.fulltext * text) / total : 0;
    item.legs = { ...item.legs, fused };
  }
  return items
    .sort(
      (a, b) =>
        (b.legs?.fused ?? 0) - (a.legs?.fused ?? 0) ||
        b.score - a.score ||
        a.kind.localeCompare(b.kind) ||
        a.id.localeCompare(b.id),
    )
    .slice(0, topK);
}
