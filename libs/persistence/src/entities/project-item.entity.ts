import { Column, CreateDateColumn, JoinColumn, ManyToOne, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { vectorTransformer } from '../vector';
import { ProjectEntity } from './project.entity';

/**
 * The columns insights and recommendations share: both are a project's own items, upserted by the id
 * the project's system gives them and retrieved by one embedding of their two texts. Only the names
 * of those two texts differ (`name` + `description`, `title` + `body`: the seed's request shapes), so
 * each entity adds just those two columns (InsightEntity, RecommendationEntity).
 */
export abstract class ProjectItemColumns {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId: string;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'project_id' })
  project?: ProjectEntity;

  /** The id the project's own system gives it; unique per project, the upsert key. */
  @Column({ name: 'external_id', type: 'text' })
  externalId: string;

  /** SHA-256 (hex) of the embedded text, so an unchanged item is not re-embedded. */
  @Column({ name: 'content_hash', type: 'text' })
  contentHash: string;

  /** Untyped `vector`: length is `embeddingDims`. */
  @Column({ type: 'vector', select: false, transformer: vectorTransformer })
  embedding: number[];

  @Column({ name: 'embedding_dims', type: 'int' })
  embeddingDims: number;

  /** `provider/model` that produced the embedding. */
  @Column({ name: 'embedding_model', type: 'text' })
  embeddingModel: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
