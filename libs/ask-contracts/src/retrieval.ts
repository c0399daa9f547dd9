/** How a project's items are ranked for an ask. */
export type RetrievalMethod = 'vector' | 'fulltext' | 'hybrid';

/** Methods in the order the API lists them. */
export const RETRIEVAL_METHODS: readonly RetrievalMethod[] = ['vector', 'fulltext', 'hybrid'];

/**
 * PostgreSQL's built-in text search configurations (`pg_ts_config` of PostgreSQL 15): the ones a
 * project may choose for its full-text leg. `simple` lower-cases words and stems nothing.
 */
export const TEXT_SEARCH_CONFIGS = [
  'simple',
  'arabic',
  'armenian',
  'basque',
  'catalan',
  'danish',
  'dutch',
  'english',
  'finnish',
  'french',
  'german',
  'greek',
  'hindi',
  'hungarian',
  'indonesian',
  'irish',
  'italian',
  'lithuanian',
  'nepali',
  'norwegian',
  'portuguese',
  'romanian',
  'russian',
  'serbian',
  'spanish',
  'swedish',
  'tamil',
  'turkish',
  'yiddish',
] as const;
export type TextSearchConfig = (typeof TEXT_SEARCH_CONFIGS)[number];

/** A project's retrieval settings (`projects.retrieval_settings`; every field optional). */
export interface RetrievalSettings {
  /** Default `hybrid` ({@link DEFAULT_RETRIEVAL}). */
  method?: RetrievalMethod;
  /** Weight of the vector leg in hybrid fusion; default 0.5. */
  vectorWeight?: number;
  /** Weight of the full-text leg in hybrid fusion; default 1. */
  fulltextWeight?: number;
  /** PostgreSQL text search configuration of the full-text leg; default `simple`. */
  textSearchConfig?: TextSearchConfig;
}

/**
 * A project's retrieval when it sets none: hybrid, the vector leg at half the full-text leg's weight.
 * The best measured method for English knowledge with the default (lexical) embedder in bench/retrieval
 * on the PostgreSQL manual (bench/RESULTS.md, "Retrieval quality on the PostgreSQL manual": recall@5
 * and MRR above the vector leg alone and the full-text leg alone). The text search configuration
 * stays `simple` (no stemming, no stop words) since the knowledge's language is not known; a project
 * of English knowledge gains by setting `english` (same table).
 */
export const DEFAULT_RETRIEVAL: Readonly<Required<RetrievalSettings>> = {
  method: 'hybrid',
  vectorWeight: 0.5,
  fulltextWeight: 1,
  textSearchConfig: 'simple',
};

/** The settings with every default ({@link DEFAULT_RETRIEVAL}) filled in. */
export function effectiveRetrieval(settings: RetrievalSettings | null | undefined): Required<RetrievalSettings> {
  return {
    method: settings?.method ?? DEFAULT_RETRIEVAL.method,
    vectorWeight: settings?.vectorWeight ?? DEFAULT_RETRIEVAL.vectorWeight,
    fulltextWeight: settings?.fulltextWeight ?? DEFAULT_RETRIEVAL.fulltextWeight,
    textSearchConfig: settings?.textSearchConfig ?? DEFAULT_RETRIEVAL.textSearchConfig,
  };
}

/** Which retrieval leg found an item, with its score there. */
export interface RetrievalLegs {
  /** Rank (1 = best) and cosine similarity in the vector leg, when it found the item. */
  vector?: { rank: number; score: number };
  /** Rank and `ts_rank_cd` in the full-text leg, when it found the item. */
  fulltext?: { rank: number; score: number };
  /** Weighted reciprocal-rank-fusion score (hybrid only). */
  fused?: number;
}
