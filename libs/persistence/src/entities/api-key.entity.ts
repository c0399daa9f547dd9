import { Column, CreateDateColumn, Entity, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { ProjectEntity } from './project.entity';

/**
 * A project API key. Only the SHA-256 of the key is stored: keys carry 256 random bits, so a fast
 * hash is safe (no dictionary to attack) and verification stays cheap per request. `prefix` is the
 * public, unique part of the key used to find the row.
 */
@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'project_id', type: 'uuid' })
  projectId: string;

  @ManyToOne(() => ProjectEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'project_id' })
  project?: ProjectEntity;

  @Column({ type: 'text', unique: true })
  prefix: string;

  /** SHA-256 of the whole plaintext key, 32 bytes. */
  @Column({ name: 'key_hash', type: 'bytea', select: false })
  keyHash: Buffer;

  @Column({ type: 'text', nullable: true })
  name: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
