import type {
  ErrorEvent,
  IngestionCounts,
  IngestionFailure,
  IngestionView,
  TextSearchConfig,
} from '@ask/ask-contracts';
import type { EmbeddingProvider, EmbeddingSettings, ProviderCredentials } from '@ask/llm-providers';

/**
 * The ports of the ingestion lib: just the store methods it calls, as structural interfaces. The
 * data layer (`@ask/persistence`'s repositories and `EmbeddingLedger`) satisfies them and is
 * injected by the app (`IngestionModule.forRoot`, or `new IngestionService(...)` in the CLI and
 * benches); this lib never imports it.
 */

/** The model (`provider/model`) and vector length of stored embeddings. */
export interface EmbeddingSpace {
  model: string;
  dimensions: number;
}

/** Insights or recommendations. */
export type InsightKind = 'insight' | 'recommendation';

/** The knowledge sources and chunks of projects. */
export interface KnowledgeStore {
  /** @throws the data layer's space mismatch ({@link isEmbeddingSpaceMismatch}) when the project stores another space. */
  checkEmbeddingSpace(projectId: string, incoming: EmbeddingSpace): Promise<void>;
  spacesOtherThan(projectId: string, current: EmbeddingSpace): Promise<EmbeddingSpace[]>;
  applyTextSearchConfig(projectId: string, provisionalLanguage?: string | null): Promise<TextSearchConfig | null>;
  findSource(projectId: string, uri: string): Promise<{ contentHash: string } | null>;
  refreshStatistics(): Promise<void>;
  replaceSource(
    projectId: string,
    source: { uri: string; title: string; contentHash: string; language?: string | null },
    chunks: ReadonlyArray<{ text: string; tokenCount: number; section?: string | null; embedding: readonly number[] }>,
    embeddingModel: string,
  ): Promise<{ sourceId: string; status: 'created' | 'replaced' | 'unchanged'; chunkCount: number }>;
  countSourcesOutsideSpace(projectId: string, space: EmbeddingSpace): Promise<number>;
  sourcesOutsideSpace(
    projectId: string,
    space: EmbeddingSpace,
    limit: number,
  ): Promise<Array<{ id: string; uri: string; contentHash: string; chunkCount: number }>>;
  chunkTexts(sourceId: string): Promise<Array<{ id: string; text: string }>>;
  reembedSource(
    projectId: string,
    sourceId: string,
    contentHash: string,
    chunks: ReadonlyArray<{ id: string; embedding: readonly number[] }>,
    space: EmbeddingSpace,
  ): Promise<boolean>;
}

/** The insights and recommendations of projects. */
export interface InsightsStore {
  upsertInsights(
    projectId: string,
    items: ReadonlyArray<{
      externalId: string;
      name: string;
      description: string;
      contentHash: string;
      embedding: readonly number[];
    }>,
    embeddingModel: string,
  ): Promise<number>;
  upsertRecommendations(
    projectId: string,
    items: ReadonlyArray<{
      externalId: string;
      title: string;
      body: string;
      contentHash: string;
      embedding: readonly number[];
    }>,
    embeddingModel: string,
  ): Promise<number>;
  contentHashes(projectId: string, kind: InsightKind): Promise<Map<string, string>>;
  countOutsideSpace(projectId: string, kind: InsightKind, space: EmbeddingSpace): Promise<number>;
  itemsOutsideSpace(
    projectId: string,
    kind: InsightKind,
    space: EmbeddingSpace,
    limit: number,
  ): Promise<Array<{ id: string; text: string }>>;
  reembedItems(
    projectId: string,
    kind: InsightKind,
    items: ReadonlyArray<{ id: string; contentHash: string; embedding: readonly number[] }>,
    space: EmbeddingSpace,
  ): Promise<number>;
}

/** The stored ingestions (`ingestions` rows and their items). */
export interface IngestionsStore {
  find(projectId: string, ingestionId: string): Promise<IngestionView | null>;
  findById(ingestionId: string): Promise<IngestionView | null>;
  items(
    ingestionId: string,
  ): Promise<Array<{ kind: 'document' | 'insight' | 'recommendation'; uri: string; title: string; text: string }>>;
  start(ingestionId: string, counts: IngestionCounts, space: EmbeddingSpace | null): Promise<number>;
  progress(ingestionId: string, counts: IngestionCounts, failures: readonly IngestionFailure[]): Promise<void>;
  finish(
    ingestionId: string,
    status: 'completed' | 'failed',
    counts: IngestionCounts,
    failures: readonly IngestionFailure[],
    error?: ErrorEvent,
  ): Promise<void>;
}

/** The projects: their embedding settings and credentials. */
export interface ProjectsStore {
  findById(id: string): Promise<{ embeddingSettings: EmbeddingSettings | null } | null>;
  getCredentials(id: string): Promise<ProviderCredentials | null>;
}

/** Who an embedding call is for. */
export interface EmbeddingCallScope {
  projectId: string;
  sessionId?: string | null;
  askId?: string | null;
}

/**
 * Records each embedding call (`provider_calls`). `embed` throws an error named
 * `CallNotRecordedError` (see {@link isCallNotRecorded}) when the call's row could not be written,
 * before any request.
 */
export interface EmbeddingCallLedger {
  embed(
    provider: EmbeddingProvider,
    texts: string[],
    scope: EmbeddingCallScope,
    options?: { signal?: AbortSignal },
  ): Promise<number[][]>;
}

/** The ledger could not record the call, so none was made (the data layer's `CallNotRecordedError`). */
export function isCallNotRecorded(err: unknown): boolean {
  return err instanceof Error && err.name === 'CallNotRecordedError';
}

/** The store refused vectors of another space (the data layer's `EmbeddingSpaceMismatchError`). */
export interface EmbeddingSpaceMismatch {
  code: 'embedding_dimensions_mismatch';
  stored: readonly EmbeddingSpace[];
  incoming: EmbeddingSpace;
}

/**
 * Whether `err` is the data layer's refusal of another embedding space: by its name and code, and
 * the spaces it names (an AskError 502 `embedding_dimensions_mismatch`, a provider's vector of the
 * wrong length, shares the code but is not one).
 */
export function isEmbeddingSpaceMismatch(err: unknown): err is EmbeddingSpaceMismatch {
  if (!(err instanceof Error) || err.name !== 'EmbeddingSpaceMismatchError') return false;
  const e = err as Partial<EmbeddingSpaceMismatch>;
  return e.code === 'embedding_dimensions_mismatch' && Array.isArray(e.stored) && typeof e.incoming === 'object';
}

/** Injection tokens of the ports ({@link IngestionModule.forRoot} binds them). */
export const KNOWLEDGE_STORE = Symbol('KnowledgeStore');
export const INSIGHTS_STORE = Symbol('InsightsStore');
export const INGESTIONS_STORE = Symbol('IngestionsStore');
export const PROJECTS_STORE = Symbol('ProjectsStore');
export const EMBEDDING_CALL_LEDGER = Symbol('EmbeddingCallLedger');
