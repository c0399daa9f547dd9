import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';
import { ProjectEntity } from './project.entity';

/** A document ingested into a project's knowledge base; its text lives in its chunks. */
@Entity({ name: 'knowledge_sources' })
@Index('knowledge_sources_project_uri_key', ['projectId', 'uri'], { unique: true })
export class KnowledgeSourceEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId: string;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'project_id' })
  project?: ProjectEntity;

  /** Where the document came from (relative path, URL or id); unique per project, the replace key. */
  @Column({ type: 'text' })
  uri: string;

  @Column({ type: 'text' })
  title: string;

  /** SHA-256 (hex) of the document text: an unchanged document is skipped on re-ingestion. */
  @Column({ name: 'content_hash', type: 'text' })
  contentHash: string;

  @Column({ name: 'chunk_count', type: 'int' })
  chunkCount: number;

  /** Length of every chunk embedding of this source. */
  @Column({ name: 'embedding_dims', type: 'int' })
  embeddingDims: number;

  /** `provider/model` that produced every chunk embedding of this source. */
  @Column({ name: 'embedding_model', type: 'text' })
  embeddingModel: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
