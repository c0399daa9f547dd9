export * from './api-keys.repository';
export * from './ingestions.repository';
export * from './asks.repository';
export * from './insights.repository';
export * from './learned-windows.repository';
export { KnowledgeRepository } from './knowledge.repository';
export type {
  KnowledgeChunkInput,
  KnowledgeSource,
  KnowledgeSourceInput,
  ReplaceSourceResult,
} from './knowledge.repository';
export * from './projects.repository';
export * from './retrieval.repository';
export * from './sessions.repository';
export * from './usage.repository';
export * from './provider-calls.repository';
export * from './fuse-rankings';
export * from './summaries.repository';
