import { credentialSecrets, registerSecrets } from '@ask/ask-errors';
import type { MemorySettings, RetrievalSettings, TextSearchConfig } from '@ask/ask-contracts';
import type { EmbeddingSettings, LlmSettings, ProviderCredentials } from '@ask/llm-providers';
import { Injectable } from '@nestjs/common';
import { DataSource, type Repository } from 'typeorm';
import { CredentialsCipher } from '../credentials-cipher';
import { ProjectEntity } from '../entities';
import { isUuid } from '../ids';
import { pgQuery } from '../pg-query';
import type { EmbeddingSpace } from '../errors';
import { STORED_SPACES_SQL } from './knowledge.repository';
import { applyTextSearchConfig } from './text-search-config';
import type { LearnedWindow } from './learned-windows.repository';
import { recentPerScriptSql, recordOf, type StoredTokenUsageRecord, type UsageRecordRow } from './usage.repository';

/** A project as the rest of the service sees it: settings, never credentials. */
export interface Project {
  id: string;
  name: string;
  /** Null: no embedding provider configured. */
  embeddingSettings: EmbeddingSettings | null;
  /** Null: no LLM provider configured. */
  llmSettings: LlmSettings | null;
  /** Retrieval method, weights and text search configuration; null: the defaults (`effectiveRetrieval`). */
  retrievalSettings: RetrievalSettings | null;
  /**
   * The text search configuration in force (`projects.text_search_config`): the explicit
   * `retrievalSettings.textSearchConfig`, else the one of the knowledge's detected language, else
   * `simple`. The project's rows are indexed with it and the full-text leg queries with it.
   */
  textSearchConfig: TextSearchConfig;
  /** Conversation memory settings; null: the defaults (`effectiveMemory`). */
  memorySettings: MemorySettings | null;
  /** Items retrieved per ask. */
  topK: number;
  /** Tokens reserved for the answer. */
  maxTokens: number;
  /** Null: the service's default system prompt. */
  systemPrompt: string | null;
  /** Cap on history messages per ask; null: no cap. */
  maxHistoryMessages: number | null;
  /** Whether encrypted provider credentials are stored (their content is never exposed here). */
  hasCredentials: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** What {@link ProjectsRepository.findForSynthesis} returns. */
export interface SynthesisProject {
  project: Project;
  /** The windows providers disclosed for the project's models, by provider then model. */
  windows: LearnedWindow[];
  /** The project's newest calibration records of its LLM model per script class (`UsageRepository.recentPerScript` with the project, its order). */
  calibration: StoredTokenUsageRecord[];
  /** Every project's newest records of the model per script class (`recentPerScript` without a project): the model-wide prior. */
  calibrationPrior: StoredTokenUsageRecord[];
  /** The project's decrypted credentials (null: none stored); decrypted and registered as secrets on call. */
  credentials(): ProviderCredentials | null;
}

/** Settings a project is created with or updated to; omitted fields keep their value (or default). */
export interface ProjectSettingsInput {
  name?: string;
  embeddingSettings?: EmbeddingSettings | null;
  llmSettings?: LlmSettings | null;
  retrievalSettings?: RetrievalSettings | null;
  memorySettings?: MemorySettings | null;
  topK?: number;
  maxTokens?: number;
  systemPrompt?: string | null;
  maxHistoryMessages?: number | null;
}

const PUBLIC_COLUMNS = [
  'p.id',
  'p.name',
  'p.embeddingSettings',
  'p.llmSettings',
  'p.retrievalSettings',
  'p.textSearchConfig',
  'p.memorySettings',
  'p.topK',
  'p.maxTokens',
  'p.systemPrompt',
  'p.maxHistoryMessages',
  'p.createdAt',
  'p.updatedAt',
];

/**
 * Projects and their provider settings and credentials. Credentials are sealed with
 * {@link CredentialsCipher} (AES-256-GCM) and only ever returned by {@link getCredentials}.
 */
@Injectable()
export class ProjectsRepository {
  private readonly projects: Repository<ProjectEntity>;

  constructor(
    private readonly dataSource: DataSource,
    private readonly cipher: CredentialsCipher,
  ) {
    this.projects = dataSource.getRepository(ProjectEntity);
  }

  /**
   * Creates a project. Unset settings take the column defaults (top-K 8, `max_tokens` 2,048, no
   * providers, default system prompt, no history cap).
   * @throws QueryFailedError on a CHECK violation (top-K or `max_tokens` below 1).
   */
  async create(input: ProjectSettingsInput & { name: string }): Promise<Project> {
    const inserted = await this.projects.insert(this.projects.create(input));
    const id = inserted.identifiers[0]['id'] as string;
    if (input.retrievalSettings?.textSearchConfig) {
      await this.dataSource.transaction((manager) => applyTextSearchConfig(manager, id));
    }
    return (await this.findById(id)) as Project;
  }

  /**
   * The project, or null when there is none with this id (or the id is not a UUID). One plain SQL
   * round trip (no query builder: this runs on every ask in all three apps).
   */
  async findById(id: string): Promise<Project | null> {
    if (!isUuid(id)) return null;
    const rows = await pgQuery<ProjectRow>(
      this.dataSource,
      `SELECT ${PROJECT_SQL_COLUMNS} FROM projects WHERE id = $1`,
      [id],
      'ask_project_by_id',
    );
    return rows[0] ? rowToProject(rows[0]) : null;
  }

  /**
   * The project and its decrypted credentials in one round trip (what an ask needs before calling a
   * provider); credentials null when none are stored. Null when there is no such project.
   * @throws Error when stored credentials cannot be decrypted (wrong or missing ASK_ENCRYPTION_KEY).
   */
  async findWithCredentials(id: string): Promise<{ project: Project; credentials: ProviderCredentials | null } | null> {
    if (!isUuid(id)) return null;
    const rows = await pgQuery<ProjectRow & { credentials_encrypted: Buffer | null }>(
      this.dataSource,
      `SELECT ${PROJECT_SQL_COLUMNS}, credentials_encrypted FROM projects WHERE id = $1`,
      [id],
      'ask_project_with_credentials',
    );
    if (!rows[0]) return null;
    return { project: rowToProject(rows[0]), credentials: this.openCredentials(id, rows[0].credentials_encrypted) };
  }

  /**
   * What accepting or retrieving an ask reads, in one round trip instead of two: the project, its
   * decrypted credentials (null when none are stored), and the embedding spaces of the vectors it
   * stores (`KnowledgeRepository.storedSpaces`: distinct model and dimensions over its non-empty
   * knowledge sources, insights and recommendations, ordered by model then dimensions). Null when
   * there is no such project (or the id is not a UUID).
   * @throws Error when stored credentials cannot be decrypted (wrong or missing ASK_ENCRYPTION_KEY).
   */
  async findForAsk(
    id: string,
  ): Promise<{ project: Project; credentials: ProviderCredentials | null; spaces: EmbeddingSpace[] } | null> {
    if (!isUuid(id)) return null;
    const rows = await pgQuery<
      ProjectRow & { credentials_encrypted: Buffer | null; spaces: Array<{ model: string; dimensions: number }> }
    >(
      this.dataSource,
      `SELECT ${PROJECT_SQL_COLUMNS}, credentials_encrypted,
         (SELECT coalesce(json_agg(json_build_object('model', s.model, 'dimensions', s.dimensions) ORDER BY s.model, s.dimensions), '[]'::json)
            FROM (${STORED_SPACES_SQL}) s) AS spaces
       FROM projects WHERE id = $1`,
      [id],
      'ask_project_for_ask',
    );
    if (!rows[0]) return null;
    return {
      project: rowToProject(rows[0]),
      credentials: this.openCredentials(id, rows[0].credentials_encrypted),
      spaces: rows[0].spaces.map((s) => ({ model: s.model, dimensions: s.dimensions })),
    };
  }

  /**
   * What a synthesis run (and a summary job) reads about its project, in one round trip instead of
   * three or four: the project; the windows its providers disclosed (`LearnedWindowsRepository.list`,
   * every model of the project); the calibration records of its LLM model, its own and every
   * project's (`UsageRepository.recentPerScript` for `llm_settings.model`, `calibration.counterId`
   * and `calibration.perScript`, with and without the project; `[]` without LLM settings); and its credentials, decrypted only when
   * `credentials()` is called (null when none are stored). Null when there is no such project (or the
   * id is not a UUID). Named statement.
   * @throws from `credentials()`: EncryptionKeyMissingError / CredentialsUndecryptableError as
   *   {@link getCredentials}.
   */
  async findForSynthesis(
    id: string,
    calibration: { counterId: string; perScript: number },
  ): Promise<SynthesisProject | null> {
    if (!isUuid(id)) return null;
    const rows = await pgQuery<
      ProjectRow & {
        credentials_encrypted: Buffer | null;
        windows: Array<{ provider: string; model: string; window_tokens: number; disclosed_at: string }>;
        calibration: Array<Omit<UsageRecordRow, 'created_at'> & { created_at: string }>;
        calibration_prior: Array<Omit<UsageRecordRow, 'created_at'> & { created_at: string }>;
      }
    >(
      this.dataSource,
      `SELECT ${PROJECT_SQL_COLUMNS}, credentials_encrypted,
         (SELECT coalesce(json_agg(json_build_object('provider', w.provider, 'model', w.model,
                   'window_tokens', w.window_tokens, 'disclosed_at', w.disclosed_at) ORDER BY w.provider, w.model), '[]'::json)
            FROM learned_windows w WHERE w.project_id = projects.id) AS windows,
         (SELECT coalesce(json_agg(row_to_json(r) ORDER BY r.script NULLS LAST, r.created_at DESC, r.id DESC), '[]'::json)
            FROM (${recentPerScriptSql("projects.llm_settings->>'model'", '$2', '$3', 'projects.id')}) r) AS calibration,
         (SELECT coalesce(json_agg(row_to_json(r) ORDER BY r.script NULLS LAST, r.created_at DESC, r.id DESC), '[]'::json)
            FROM (${recentPerScriptSql("projects.llm_settings->>'model'", '$2', '$3')}) r) AS calibration_prior
       FROM projects WHERE id = $1`,
      [id, calibration.counterId, Math.max(0, Math.floor(calibration.perScript))],
      'ask_project_for_synthesis',
    );
    const row = rows[0];
    if (!row) return null;
    return {
      project: rowToProject(row),
      windows: row.windows.map((w) => ({
        provider: w.provider,
        model: w.model,
        window: w.window_tokens,
        disclosedAt: new Date(w.disclosed_at),
      })),
      calibration: row.calibration.map((r) => recordOf({ ...r, created_at: new Date(r.created_at) })),
      calibrationPrior: row.calibration_prior.map((r) => recordOf({ ...r, created_at: new Date(r.created_at) })),
      credentials: () => this.openCredentials(id, row.credentials_encrypted),
    };
  }

  /** Every project, newest first (at most `limit`, default 1,000), without credentials. */
  async list({ limit = 1_000 }: { limit?: number } = {}): Promise<Project[]> {
    const rows = await this.projects
      .createQueryBuilder('p')
      .select(PUBLIC_COLUMNS)
      .addSelect('p.credentials_encrypted IS NOT NULL', 'has_credentials')
      .orderBy('p.created_at', 'DESC')
      .addOrderBy('p.id')
      .limit(limit)
      .getRawAndEntities();
    return rows.entities.map((entity) => {
      const raw = rows.raw.find((r) => r['p_id'] === entity.id);
      return toProject(entity, raw?.['has_credentials'] === true);
    });
  }

  /**
   * Applies the given settings (an explicit null clears a nullable one). A change of retrieval
   * settings sets the text search configuration in force (the explicit one, else the knowledge's
   * detected language's: `applyTextSearchConfig`) and re-derives the full-text vectors of the
   * project's rows when it changed, in the same transaction.
   * @returns the updated project, or null when it does not exist.
   */
  async updateSettings(id: string, patch: ProjectSettingsInput): Promise<Project | null> {
    if (!isUuid(id)) return null;
    const values = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined));
    if (Object.keys(values).length > 0) {
      await this.dataSource.transaction(async (manager) => {
        await manager.getRepository(ProjectEntity).update({ id }, values as Partial<ProjectEntity>);
        // Rows keep the configuration they were written with; rewriting it regenerates their tsvector.
        if (patch.retrievalSettings !== undefined) await applyTextSearchConfig(manager, id);
      });
    }
    return this.findById(id);
  }

  /**
   * Stores the project's provider credentials encrypted (null removes them).
   * @returns false when the project does not exist.
   * @throws EncryptionKeyMissingError when credentials are given and ASK_ENCRYPTION_KEY is unset.
   */
  async setCredentials(id: string, credentials: ProviderCredentials | null): Promise<boolean> {
    if (!isUuid(id)) return false;
    // The process now holds them: their exact values are redacted from anything it writes out.
    registerSecrets(credentialSecrets(credentials as Record<string, unknown> | null));
    const sealed = credentials === null ? null : this.cipher.seal(id, credentials);
    const result = await this.projects.update({ id }, { credentialsEncrypted: sealed });
    return (result.affected ?? 0) > 0;
  }

  /**
   * The project's decrypted provider credentials; null when none are stored or the project does not
   * exist. Call only where the provider is called (the synthesis and retrieval workers). Their values
   * are registered with `registerSecrets`, so the process redacts them from what it writes.
   * @throws EncryptionKeyMissingError when credentials are stored and ASK_ENCRYPTION_KEY is unset;
   *   CredentialsUndecryptableError when they fail authentication.
   */
  async getCredentials(id: string): Promise<ProviderCredentials | null> {
    if (!isUuid(id)) return null;
    const rows: Array<{ credentials_encrypted: Buffer | null }> = await this.dataSource.query(
      'SELECT credentials_encrypted FROM projects WHERE id = $1',
      [id],
    );
    return this.openCredentials(id, rows[0]?.credentials_encrypted ?? null);
  }

  private openCredentials(id: string, sealed: Buffer | null): ProviderCredentials | null {
    if (!sealed) return null;
    const credentials = this.cipher.open(id, sealed);
    // Decrypted here, so redacted from every body, event and log line this process writes.
    registerSecrets(credentialSecrets(credentials as Record<string, unknown>));
    return credentials;
  }

  /**
   * Deletes the project and, by cascade, everything it owns.
   * @returns false when it did not exist.
   */
  async delete(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const result = await this.projects.delete({ id });
    return (result.affected ?? 0) > 0;
  }
}

/** The columns of a {@link Project} in plain SQL (snake case, as `ProjectEntity` maps them). */
const PROJECT_SQL_COLUMNS =
  'id, name, embedding_settings, llm_settings, retrieval_settings, text_search_config, memory_settings, top_k, max_tokens, system_prompt, max_history_messages, created_at, updated_at, credentials_encrypted IS NOT NULL AS has_credentials';

/** A `projects` row as `PROJECT_SQL_COLUMNS` selects it (jsonb parsed, timestamptz as Date by node-postgres). */
interface ProjectRow {
  id: string;
  name: string;
  embedding_settings: EmbeddingSettings | null;
  llm_settings: LlmSettings | null;
  retrieval_settings: RetrievalSettings | null;
  text_search_config: TextSearchConfig;
  memory_settings: MemorySettings | null;
  top_k: number;
  max_tokens: number;
  system_prompt: string | null;
  max_history_messages: number | null;
  created_at: Date;
  updated_at: Date;
  has_credentials: boolean;
}

function rowToProject(r: ProjectRow): Project {
  return {
    id: r.id,
    name: r.name,
    embeddingSettings: r.embedding_settings,
    llmSettings: r.llm_settings,
    retrievalSettings: r.retrieval_settings,
    textSearchConfig: r.text_search_config,
    memorySettings: r.memory_settings,
    topK: r.top_k,
    maxTokens: r.max_tokens,
    systemPrompt: r.system_prompt,
    maxHistoryMessages: r.max_history_messages,
    hasCredentials: r.has_credentials,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toProject(e: ProjectEntity, hasCredentials: boolean): Project {
  return {
    id: e.id,
    name: e.name,
    embeddingSettings: e.embeddingSettings,
    llmSettings: e.llmSettings,
    retrievalSettings: e.retrievalSettings,
    textSearchConfig: e.textSearchConfig,
    memorySettings: e.memorySettings,
    topK: e.topK,
    maxTokens: e.maxTokens,
    systemPrompt: e.systemPrompt,
    maxHistoryMessages: e.maxHistoryMessages,
    hasCredentials,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  };
}
