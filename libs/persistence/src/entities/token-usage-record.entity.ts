import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One comparison of our prompt-token count with the provider's report, for calibrating approximate
 * counters per model.
 */
@Entity({ name: 'token_usage_records' })
export class TokenUsageRecordEntity {
  @PrimaryGeneratedColumn('increment', { type: 'bigint' })
  id: string;

  @Column({ type: 'text' })
  model: string;

  @Column({ name: 'counter_id', type: 'text' })
  counterId: string;

  /** Our count of the prompt we sent, in tokens. */
  @Column({ type: 'int' })
  estimated: number;

  /** The provider's reported prompt tokens. */
  @Column({ type: 'int' })
  reported: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
