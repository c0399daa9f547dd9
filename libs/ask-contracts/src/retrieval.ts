import type { RetrievedItem } from './queues';
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
  /** Weight of the vector leg in hybrid fusion; default per embedder ({@link defaultFusionWeights}). */
  vectorWeight?: number;
  /** Weight of the full-text leg in hybrid fusion; default per embedder ({@link defaultFusionWeights}). */
  fulltextWeight?: number;
  /**
   * PostgreSQL text search configuration of the full-text leg. Unset: the one of the knowledge's
   * detected language ({@link textSearchConfigForLanguage}), `simple` when unknown or unsupported.
   */
  textSearchConfig?: TextSearchConfig;
  /**
   * Items scored below the relevance floor of the project's embedder and method: sent only
   * in room conversation memory could not use (`spare-room`, the default), or never (`never`).
   */
  lowRelevance?: LowRelevancePolicy;
}

/**
 * What happens to a retrieved item scored below the relevance floor: `spare-room` sends it only in
 * room conversation memory could not use (never displacing a summary or a verbatim pair); `never`
 * leaves it out.
 */
export type LowRelevancePolicy = 'spare-room' | 'never';

/** Policies in the order the API lists them. */
export const LOW_RELEVANCE_POLICIES: readonly LowRelevancePolicy[] = ['spare-room', 'never'];

/** The default {@link LowRelevancePolicy}. */
export const DEFAULT_LOW_RELEVANCE: LowRelevancePolicy = 'spare-room';

/**
 * A project's retrieval method when it sets none: hybrid (both legs, weighted reciprocal rank
 * fusion). With the knowledge's language detected (English for the PostgreSQL manual, so the
 * `english` configuration) and the embedder's default weights, it is the best measured method for
 * English knowledge in bench/retrieval (bench/RESULTS.md, "Retrieval quality on the PostgreSQL
 * manual": recall@5 and MRR above either leg alone, per embedder).
 */
export const DEFAULT_RETRIEVAL: Readonly<{ method: RetrievalMethod }> = { method: 'hybrid' };

/** Fusion weights of the two legs. */
export interface FusionWeightPair {
  vectorWeight: number;
  fulltextWeight: number;
}

/**
 * Hybrid weights when a project sets none, per embedder, chosen in bench/retrieval on the PostgreSQL
 * manual with the `english` configuration (bench/RESULTS.md, "Retrieval quality on the PostgreSQL
 * manual") under the former reciprocal rank fusion: the lexical `local` embedder's vector leg is weak
 * (recall@5 0.36 alone), so it gets half the full-text leg's weight; a semantic embedder's vector leg
 * (0.54 alone) is close to full text's (0.60), so equal weights. Under normalised score fusion (fuseRankings)
 * the defaults measure recall@5 0.662 (`local`, 0.695 at 1 / 1) and 0.675 (`local-semantic`, 0.656 at
 * 0.5 / 1); the lexical default is kept until held-out corpora decide it. Remote embedders are semantic:
 * they take 1 / 1 (not measured here).
 * @param embeddingProvider the project's embedding provider id (`local`, `local-semantic`, `openai`, …).
 */
export function defaultFusionWeights(embeddingProvider: string | undefined): FusionWeightPair {
  return embeddingProvider === 'local'
    ? { vectorWeight: 0.5, fulltextWeight: 1 }
    : { vectorWeight: 1, fulltextWeight: 1 };
}

/**
 * PostgreSQL text search configuration per ISO 639-1 language code (as tinyld detects them): the
 * built-in configuration of that language, for the languages PostgreSQL 15 ships one for.
 */
const CONFIG_OF_LANGUAGE: Readonly<Record<string, TextSearchConfig>> = {
  ar: 'arabic',
  hy: 'armenian',
  eu: 'basque',
  ca: 'catalan',
  da: 'danish',
  nl: 'dutch',
  en: 'english',
  fi: 'finnish',
  fr: 'french',
  de: 'german',
  el: 'greek',
  hi: 'hindi',
  hu: 'hungarian',
  id: 'indonesian',
  ga: 'irish',
  it: 'italian',
  lt: 'lithuanian',
  ne: 'nepali',
  no: 'norwegian',
  nb: 'norwegian',
  nn: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sr: 'serbian',
  es: 'spanish',
  sv: 'swedish',
  ta: 'tamil',
  tr: 'turkish',
  yi: 'yiddish',
};

/**
 * The text search configuration for knowledge in `language` (ISO 639-1, e.g. `en` → `english`,
 * `de` → `german`); `simple` (lower-case, no stemming, no stop words) when the language is unknown
 * (null) or PostgreSQL has no configuration for it (`zh`, `ja`, …).
 */
export function textSearchConfigForLanguage(language: string | null | undefined): TextSearchConfig {
  return (language && CONFIG_OF_LANGUAGE[language.toLowerCase()]) || 'simple';
}

/**
 * The settings with every default filled in: method {@link DEFAULT_RETRIEVAL}, weights
 * {@link defaultFusionWeights} of the project's embedder, and the text search configuration the
 * project's rows are indexed with (`inForce`: the explicit setting, else the one of the knowledge's
 * detected language; `projects.text_search_config`), `simple` when not given.
 */
export function effectiveRetrieval(
  settings: RetrievalSettings | null | undefined,
  context: { embeddingProvider?: string; textSearchConfig?: TextSearchConfig } = {},
): Required<Omit<RetrievalSettings, 'lowRelevance'>> {
  const weights = defaultFusionWeights(context.embeddingProvider);
  return {
    method: settings?.method ?? DEFAULT_RETRIEVAL.method,
    vectorWeight: settings?.vectorWeight ?? weights.vectorWeight,
    fulltextWeight: settings?.fulltextWeight ?? weights.fulltextWeight,
    textSearchConfig: settings?.textSearchConfig ?? context.textSearchConfig ?? 'simple',
  };
}

/** Which retrieval leg found an item, with its score there. */
export interface RetrievalLegs {
  /** Rank (1 = best) and cosine similarity in the vector leg, when it found the item. */
  vector?: { rank: number; score: number };
  /**
   * Rank and Okapi BM25 score in the full-text leg, when it found the item, and `coverage`: the
   * idf-weighted share of the question's lexemes the item holds, in [0, 1] (a lexeme no row of the
   * project holds counts its embedder's `absentWeight` times in the denominator: `ABSTAIN_RULES`).
   */
  fulltext?: { rank: number; score: number; coverage?: number };
  /** Fused score in [0, 1]: weighted convex combination of the legs' normalised scores (hybrid only). */
  fused?: number;
}

/** One entry of an answer's sources list (`done` event, stored message). */
export interface CitedSource {
  kind: string;
  id: string;
  title: string;
  source?: string;
}

/**
 * The sources list of an answer from the items its prompt kept, best first: one entry per page —
 * knowledge chunks of the same `source` (the knowledge source's uri, one per ingested page) are
 * grouped under the first (best) of them — and every insight, recommendation or chunk without a
 * `source` as it is. Order is the items' order (a page cited three times by three of its chunks is
 * listed once, so the list reads as pages, not chunks).
 * @param items the kept items, best first.
 * @returns `{ kind, id, title, source }` per page or item (`id` of its best chunk for a page).
 */
export function citedSources(
  items: ReadonlyArray<{ kind: string; id: string; title: string; source?: string }>,
): CitedSource[] {
  const seen = new Set<string>();
  const out: CitedSource[] = [];
  for (const { kind, id, title, source } of items) {
    if (source !== undefined) {
      const page = `${kind}:${source}`;
      if (seen.has(page)) continue;
      seen.add(page);
    }
    out.push({ kind, id, title, source });
  }
  return out;
}

/**
 * The figures of one retrieval method over a question file: what `ask eval` prints (and, with
 * `--json`, writes one object per method), which the held-out retrieval bench reads.
 */
export interface EvalFigures {
  method: RetrievalMethod;
  /** Answerable questions (at least one expected source) and unanswerable ones (`sources: []`). */
  answerable: number;
  unanswerable: number;
  /** Share of answerable questions whose first / first five sources hold an expected one. */
  recallAt1: number;
  recallAt5: number;
  /** Mean reciprocal rank of the first expected source among the sources (0 when absent). */
  mrr: number;
  /** Unanswerable questions the stand-in abstains on, of `unanswerable`. */
  unanswerableAbstained: number;
  /** Answerable questions the stand-in abstains on, of `answerable`. */
  answerableAbstained: number;
  /**
   * The abstain threshold applied to the question's relevance evidence (`relevanceEvidence` below
   * it: see `ABSTAIN_RULES`), or null: the embedder has no rule (never abstains).
   */
  abstainBelow: number | null;
  /**
   * With `--per-question`: each question in file order, whether it is answerable, the rank of its
   * first expected source among the sources (null: absent), its relevance evidence (null: nothing
   * retrieved, or the vector method's +Infinity) and whether it was abstained on.
   */
  questions?: Array<{ answerable: boolean; rank: number | null; evidence: number | null; abstained: boolean }>;
}

/**
 * The relevance judgement of one embedder: an item's evidence = its full-text `coverage` +
 * `cosineWeight` × its cosine (`itemRelevance`); a retrieval none of whose items reaches `below`
 * found nothing relevant: the stand-in abstains, `ask eval` counts an abstention and the planner
 * takes every item for low-relevance ({@link relevanceJudgement}).
 */
export interface AbstainRule {
  cosineWeight: number;
  below: number;
  /**
   * How many times a question lexeme no row of the project holds (df = 0) counts in the denominator of
   * the full-text `coverage` (1: as any lexeme), ≥ 1; applied in SQL by the full-text leg.
   */
  absentWeight: number;
}

/**
 * The one relevance judgement per embedding model (calibrated, not a constant), used by `ask eval`, the local
 * stand-in's abstain and the planner's relevance floor alike. The evidence is the best item's idf-weighted
 * coverage of the question (a lexeme in the page title, section path or text counts; the cosine weight is 0,
 * the best cosine added nothing when it was fitted with text-only chunks), where a question lexeme no row of
 * the project holds (df = 0) counts `absentWeight` times in the denominator: coverage = Σ held idf /
 * (Σ idf + (absentWeight − 1) · Σ absent idf), computed by the full-text leg's SQL (persistence
 * `coverageDenominator`). A question that shares most words with the corpus but names what it never holds
 * ("back up a MongoDB replica set" on redis-doc) scores lower than on coverage alone.
 * Fitted by bench/retrieval/fit-fields.ts (from `ask eval`'s per-question evidence and `questionTerms`' absent
 * lexemes) on the fit corpora — the PostgreSQL manual's bench/retrieval/questions.jsonl, and redis-doc,
 * rust-book, prometheus-docs and curl-docs with bench/retrieval/heldout/*.jsonl — under both documented hybrid
 * weightings (0.5 / 1 and 1 / 1): over absent weights 1, 1.5, 2, 3, 4, 6, 8 × thresholds 0.30..0.70, the pair
 * that abstains on the largest share of unanswerable questions on the worst corpus and weighting while
 * abstaining on at most 7% of the answerable ones on each (headroom under the 10% target).
 * `local-lexical-v1`: absent weight 2, below 0.34: unanswerable abstained 87% / 86% / 86% / 87% / 100% (PG /
 * redis-doc / rust-book / prometheus-docs / curl-docs), answerable 3% / 2% / 0–2% / 5–7% / 2% (coverage alone,
 * below 0.40: 70% / 64% / 86% / 93% / 93%); leave one corpus out, worst unanswerable abstained 83% (coverage
 * alone 64%), worst answerable 10% (10%). `use-lite-512` (answering pages + 20 others of the four documentation
 * corpora, the PostgreSQL manual's 274 pages): absent weight 2, below 0.35: unanswerable abstained 87% / 86% /
 * 86% / 87% / 100%, answerable 4% / 2% / 0% / 5% / 3% (coverage alone, below 0.32: 53% / 50% / 50% / 87% /
 * 71%); leave one corpus out, worst unanswerable 79% (coverage alone 47%), worst answerable 7% (8%)
 * (bench/RESULTS.md, "BM25F field weights and the abstain rule", "Absent lexemes"). The vector method alone
 * gathers no full-text evidence and is never judged ({@link relevanceRule}); an embedder without a rule never
 * abstains (and its coverage counts an absent lexeme once).
 */
export const ABSTAIN_RULES: Readonly<Record<string, AbstainRule>> = {
  'local-lexical-v1': { cosineWeight: 0, below: 0.34, absentWeight: 2 },
  'use-lite-512': { cosineWeight: 0, below: 0.35, absentWeight: 2 },
};

/** The abstain rule of an embedding model (`ABSTAIN_RULES`), or undefined: never abstain. */
export function abstainRule(embeddingModel: string | undefined): AbstainRule | undefined {
  return embeddingModel === undefined ? undefined : ABSTAIN_RULES[embeddingModel];
}

/**
 * The relevance judgement of an embedding model under a retrieval method: its `ABSTAIN_RULES` entry
 * under `hybrid` and `fulltext`, none under `vector` (no full-text evidence is gathered: never
 * abstains, no floor) or for an embedder without a rule.
 */
export function relevanceRule(embeddingModel: string | undefined, method: RetrievalMethod): AbstainRule | undefined {
  return method === 'vector' ? undefined : abstainRule(embeddingModel);
}

/**
 * One item's relevance evidence: its full-text `coverage` (0 when the full-text leg did not find
 * it) plus `cosineWeight` × its cosine `score`. An item without `legs` (the vector method alone: no
 * full-text evidence was gathered) gives +Infinity: there is nothing to judge it by.
 */
export function itemRelevance(
  item: Pick<RetrievedItem, 'score' | 'legs'>,
  rule: Pick<AbstainRule, 'cosineWeight'>,
): number {
  if (item.legs === undefined) return Number.POSITIVE_INFINITY;
  return (item.legs.fulltext?.coverage ?? 0) + rule.cosineWeight * item.score;
}

/**
 * The relevance evidence of a retrieval for its question: the best {@link itemRelevance} among its
 * items. Null when nothing was retrieved. It comes from the fused ranking's own items, so the same
 * rule holds under every weighting; items of the vector method alone give +Infinity.
 */
export function relevanceEvidence(
  items: ReadonlyArray<Pick<RetrievedItem, 'score' | 'legs'>>,
  rule: Pick<AbstainRule, 'cosineWeight'>,
): number | null {
  if (items.length === 0) return null;
  return Math.max(...items.map((i) => itemRelevance(i, rule)));
}

/** Whether a retrieval's evidence says nothing relevant was found (nothing retrieved, or below the rule). */
export function abstainsOn(items: ReadonlyArray<Pick<RetrievedItem, 'score' | 'legs'>>, rule: AbstainRule): boolean {
  const evidence = relevanceEvidence(items, rule);
  return evidence === null || evidence < rule.below;
}

/** A retrieval judged by its embedder's rule: what the stand-in and a prompt are told. */
export interface RelevanceJudgement {
  /** The best item's evidence ({@link relevanceEvidence}), null when nothing was retrieved. */
  evidence: number | null;
  /** The rule's threshold. */
  below: number;
  /** True when no item reaches `below` (or nothing was retrieved): the "nothing relevant" signal. */
  nothingRelevant: boolean;
}

/**
 * The relevance judgement of a retrieval's items for a project's embedder and method
 * ({@link relevanceRule}), or undefined when no rule applies (never abstain).
 */
export function relevanceJudgement(
  items: ReadonlyArray<Pick<RetrievedItem, 'score' | 'legs'>>,
  embeddingModel: string | undefined,
  method: RetrievalMethod,
): RelevanceJudgement | undefined {
  const rule = relevanceRule(embeddingModel, method);
  if (!rule) return undefined;
  const evidence = relevanceEvidence(items, rule);
  return { evidence, below: rule.below, nothingRelevant: evidence === null || evidence < rule.below };
}
