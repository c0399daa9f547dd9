import type { MemorySettings, RetrievalSettings, TextSearchConfig } from '@ask/ask-contracts';
import type { EmbeddingSettings, LlmSettings } from '@ask/llm-providers';
import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/**
 * A project: the tenant every other row belongs to, with its provider settings.
 * `credentials_encrypted` holds the AES-256-GCM sealed {@link ProviderCredentials}; it is never
 * selected by default and never leaves the repository except decrypted through `getCredentials`.
 */
@Entity({ name: 'projects' })
export class ProjectEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'text' })
  name: string;

  /** Null until an embedding provider is configured (the gateway answers 412 then). */
  @Column({ name: 'embedding_settings', type: 'jsonb', nullable: true })
  embeddingSettings: EmbeddingSettings | null;

  /** Null until an LLM provider is configured (the gateway answers 412 then). */
  @Column({ name: 'llm_settings', type: 'jsonb', nullable: true })
  llmSettings: LlmSettings | null;

  /** Retrieval method, fusion weights and text search configuration; null: the defaults. */
  @Column({ name: 'retrieval_settings', type: 'jsonb', nullable: true })
  retrievalSettings: RetrievalSettings | null;

  /**
   * The text search configuration in force (explicit, else the knowledge's detected language's, else
   * `simple`); written only by `applyTextSearchConfig`, never through the entity.
   */
  @Column({ name: 'text_search_config', type: 'text', default: 'simple', insert: false, update: false })
  textSearchConfig: TextSearchConfig;

  /** Conversation memory mode, summariser model and summary length budget; null: the defaults. */
  @Column({ name: 'memory_settings', type: 'jsonb', nullable: true })
  memorySettings: MemorySettings | null;

  /** Items retrieved per ask. */
  @Column({ name: 'top_k', type: 'int', default: 8 })
  topK: number;

  /** Tokens reserved for the answer (the provider's `max_tokens`). */
  @Column({ name: 'max_tokens', type: 'int', default: 2048 })
  maxTokens: number;

  /** Null: the service's default system prompt. */
  @Column({ name: 'system_prompt', type: 'text', nullable: true })
  systemPrompt: string | null;

  /** Cap on history messages sent per ask (second seed's `maxHistoryMessages`); null: no cap. */
  @Column({ name: 'max_history_messages', type: 'int', nullable: true })
  maxHistoryMessages: number | null;

  /** version(1) ‖ iv(12) ‖ tag(16) ‖ ciphertext; see CredentialsCipher. */
  @Column({ name: 'credentials_encrypted', type: 'bytea', nullable: true, select: false })
  credentialsEncrypted: Buffer | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
