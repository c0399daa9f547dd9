import { InitialSchema1796015478593 } from './1796015478593-initial-schema';
import { EmbeddingHnswIndexes1796015478594 } from './1796015478594-embedding-hnsw-indexes';
import { FullTextSearch1796015478700 } from './1796015478700-full-text-search';
import { LearnedWindowsAndScriptUsage1796015479612 } from './1796015479612-learned-windows-and-script-usage';
import { IngestionJobs1796015480010 } from './1796015480010-ingestion-jobs';
import { AcceptedAsks1796015480130 } from './1796015480130-accepted-asks';
import { ProviderCalls1796015480400 } from './1796015480400-provider-calls';
import { ConversationMemory1796015480500 } from './1796015480500-conversation-memory';
import { MessageBudgetAndSources1796015480600 } from './1796015480600-message-budget-and-sources';
import { ProviderCallsSessionIndex1796015480700 } from './1796015480700-provider-calls-session-index';
import { KnowledgeLanguage1796015481515 } from './1796015481515-knowledge-language';
import { EmbeddingsInline1796015481600 } from './1796015481600-embeddings-inline';
import { ProjectCalibration1796015482600 } from './1796015482600-project-calibration';
import { FullTextTermStatistics1796015482700 } from './1796015482700-full-text-term-statistics';
import { ChunkFields1796015482800 } from './1796015482800-chunk-fields';

/** Every migration, oldest first. Listed as classes (not a glob) so they load under SWC and jest. */
export const MIGRATIONS = [
  InitialSchema1796015478593,
  EmbeddingHnswIndexes1796015478594,
  FullTextSearch1796015478700,
  LearnedWindowsAndScriptUsage1796015479612,
  IngestionJobs1796015480010,
  AcceptedAsks1796015480130,
  ProviderCalls1796015480400,
  ConversationMemory1796015480500,
  MessageBudgetAndSources1796015480600,
  ProviderCallsSessionIndex1796015480700,
  KnowledgeLanguage1796015481515,
  EmbeddingsInline1796015481600,
  ProjectCalibration1796015482600,
  FullTextTermStatistics1796015482700,
  ChunkFields1796015482800,
];
