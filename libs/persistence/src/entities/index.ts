import { ApiKeyEntity } from './api-key.entity';
import { AskSessionMessageEntity } from './ask-session-message.entity';
import { AskSessionEntity } from './ask-session.entity';
import { InsightEntity } from './insight.entity';
import { KnowledgeChunkEntity } from './knowledge-chunk.entity';
import { KnowledgeSourceEntity } from './knowledge-source.entity';
import { ProjectEntity } from './project.entity';
import { RecommendationEntity } from './recommendation.entity';
import { TokenUsageRecordEntity } from './token-usage-record.entity';

export {
  ApiKeyEntity,
  AskSessionEntity,
  AskSessionMessageEntity,
  InsightEntity,
  KnowledgeChunkEntity,
  KnowledgeSourceEntity,
  ProjectEntity,
  RecommendationEntity,
  TokenUsageRecordEntity,
};
export type { TokenCountsByCounter } from './ask-session-message.entity';

/** Every entity, for the DataSource. */
export const ENTITIES = [
  ProjectEntity,
  ApiKeyEntity,
  InsightEntity,
  RecommendationEntity,
  KnowledgeSourceEntity,
  KnowledgeChunkEntity,
  AskSessionEntity,
  AskSessionMessageEntity,
  TokenUsageRecordEntity,
];
