import { Column, CreateDateColumn, Entity, Generated, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { AskSessionEntity } from './ask-session.entity';

/** Token counts of one message per token counter id: `{ [counterId]: { question, answer } }`. */
export type TokenCountsByCounter = Record<string, { question: number; answer: number }>;

/**
 * One question/answer pair of a session. `ask_id` is unique: the ask id (BullMQ job id) is the
 * persistence key, so a retried job can never store a second pair.
 */
@Entity({ name: 'ask_session_messages' })
export class AskSessionMessageEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** Insertion order; ties of `created_at` within a session are broken by it. */
  @Column({ type: 'bigint' })
  @Generated('increment')
  seq: string;

  @Column({ name: 'session_id', type: 'uuid' })
  sessionId: string;

  @ManyToOne(() => AskSessionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'session_id' })
  session?: AskSessionEntity;

  @Column({ name: 'ask_id', type: 'text', unique: true })
  askId: string;

  @Column({ type: 'text' })
  question: string;

  @Column({ type: 'text' })
  answer: string;

  /** Only finished answers are stored; the column leaves room for other states later. */
  @Column({ type: 'text', default: 'complete' })
  status: 'complete';

  /** Cached counts per counter id, so history is never re-tokenised. */
  @Column({ name: 'token_counts', type: 'jsonb', default: () => "'{}'::jsonb" })
  tokenCounts: TokenCountsByCounter;

  /** As the provider reported them; null when it did not. */
  @Column({ name: 'prompt_tokens', type: 'int', nullable: true })
  promptTokens: number | null;

  @Column({ name: 'completion_tokens', type: 'int', nullable: true })
  completionTokens: number | null;

  @Column({ type: 'text', nullable: true })
  provider: string | null;

  @Column({ type: 'text', nullable: true })
  model: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
