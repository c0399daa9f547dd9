export { chunkDocument, MARKDOWN_SEPARATORS } from './chunk-document';
export type { ChunkOptions, DocumentChunk } from './chunk-document';
export { IngestionModule } from './ingestion.module';
export type { IngestionStores } from './ingestion.module';
export { isCallNotRecorded, isEmbeddingSpaceMismatch } from './ports';
export type {
  EmbeddingCallLedger,
  EmbeddingCallScope,
  EmbeddingSpace,
  EmbeddingSpaceMismatch,
  IngestionsStore,
  InsightKind,
  InsightsStore,
  KnowledgeStore,
  ProjectsStore,
} from './ports';
export { embeddingSpace, IngestionService } from './ingestion.service';
export type {
  DocumentFailedHandler,
  IngestionProgress,
  IngestionResult,
  IngestOptions,
  InsightsIngestionResult,
} from './ingestion.service';
export { loadInsightsFile, MAX_INSIGHTS_FILE_BYTES, parseInsights } from './insights-file';
export type { InsightsFile } from './insights-file';
export { DocumentLoadError, loadDocuments } from './load-documents';
export type { DocumentLoadErrorCode, LoadDocumentsOptions, SourceDocument } from './load-documents';
export { markdownTitle } from './markdown-title';
export { countTokens } from './token-length';
export { contentHash, EmbeddingCallError, embedWithRetry } from './embed-with-retry';
export type { EmbedRetryOptions } from './embed-with-retry';
export { ReembedService } from './reembed.service';
export type { ReembedResult } from './reembed.service';
export { IngestionRunner } from './ingestion-runner';
export type { IngestionEventSink, RunOptions, RunOutcome } from './ingestion-runner';
