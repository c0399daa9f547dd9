import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { vectorTransformer } from '../vector';
import { ProjectEntity } from './project.entity';

/** A recommendation for the project, retrievable by its embedding (of `title` + `body`). */
@Entity({ name: 'recommendations' })
@Index('recommendations_project_external_id_key', ['projectId', 'externalId'], { unique: true })
export class RecommendationEntity {
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

  @Column({ type: 'text' })
  title: string;

  @Column({ type: 'text' })
  body: string;

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
