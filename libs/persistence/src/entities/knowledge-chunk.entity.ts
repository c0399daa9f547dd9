import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { vectorTransformer } from '../vector';
import { KnowledgeSourceEntity } from './knowledge-source.entity';

/** One chunk of a knowledge source, with its embedding. Chunks are replaced as a whole per source. */
@Entity({ name: 'knowledge_chunks' })
@Index('knowledge_chunks_source_ordinal_key', ['sourceId', 'ordinal'], { unique: true })
export class KnowledgeChunkEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'source_id', type: 'uuid' })
  sourceId: string;

  @ManyToOne(() => KnowledgeSourceEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'source_id' })
  source?: KnowledgeSourceEntity;

  /** Denormalised from the source so search filters by project without a join. */
  @Column({ name: 'project_id', type: 'uuid' })
  projectId: string;

  /** Position of the chunk in its source, from 0. */
  @Column({ type: 'int' })
  ordinal: number;

  @Column({ type: 'text' })
  text: string;

  /** Tokens of `text` under o200k_base (the chunker's counter). */
  @Column({ name: 'token_count', type: 'int' })
  tokenCount: number;

  /** Its page's title (copied from the source at insert), indexed by the full-text leg with weight A. */
  @Column({ type: 'text', nullable: true })
  title: string | null;

  /**
   * The trail of Markdown headings above it (`Storage > Configuring retention`), indexed with weight
   * B; null under no heading and for chunks written before migration ChunkFields1796015482800.
   */
  @Column({ type: 'text', nullable: true })
  section: string | null;

  @Column({ type: 'vector', select: false, transformer: vectorTransformer })
  embedding: number[];

  @Column({ name: 'embedding_dims', type: 'int' })
  embeddingDims: number;

  /** `provider/model` of the embedding (copied from the source), so search filters on the model too. */
  @Column({ name: 'embedding_model', type: 'text' })
  embeddingModel: string;
}
