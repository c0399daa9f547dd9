import { Inject, Injectable } from '@nestjs/common';
import { invalidRequest, notFound } from '@ask/ask-errors';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { type Project, type ProjectSettingsInput, ProjectsRepository } from '@ask/persistence';
import type { CreateProjectDto, ProjectSettingsDto, UpdateProjectDto } from './project.dto';
import { assertSettingsFit } from './settings-fit';

/**
 * Creates, reads and updates projects. Credentials in a body are encrypted at rest by the repository
 * and never come back: the public shape says only whether some are stored.
 */
@Injectable()
export class ProjectsService {
  constructor(
    private readonly projects: ProjectsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * @throws AskError 400 when credentials are sent and no ASK_ENCRYPTION_KEY is set, or when the
   *   settings leave no room for a prompt (`assertSettingsFit`); nothing is stored then.
   */
  async create(body: CreateProjectDto): Promise<Project> {
    this.assertCanStore(body);
    assertSettingsFit({ llm: body.llm, maxTokens: body.maxTokens });
    const project = await this.projects.create({ ...toSettings(body), name: body.name });
    if (body.credentials) await this.projects.setCredentials(project.id, body.credentials);
    return (await this.projects.findById(project.id)) as Project;
  }

  /** Every project, newest first (at most 1,000). */
  list(): Promise<Project[]> {
    return this.projects.list();
  }

  /** @throws AskError 404 not_found. */
  async get(projectId: string): Promise<Project> {
    const project = await this.projects.findById(projectId);
    if (!project) throw notFound('project not found');
    return project;
  }

  /**
   * Applies only the fields present in the body. The settings as they would be after the update must
   * leave room for a prompt (`assertSettingsFit`).
   * @throws AskError 404 not_found; 400 invalid_request (nothing is stored).
   */
  async update(projectId: string, body: UpdateProjectDto): Promise<Project> {
    this.assertCanStore(body);
    if (body.llm !== undefined || body.maxTokens !== undefined) {
      const current = await this.get(projectId);
      assertSettingsFit({ llm: body.llm === undefined ? current.llmSettings : body.llm, maxTokens: body.maxTokens ?? current.maxTokens });
    }
    const updated = await this.projects.updateSettings(projectId, { ...toSettings(body), name: body.name });
    if (!updated) throw notFound('project not found');
    if (body.credentials) await this.projects.setCredentials(projectId, body.credentials);
    return this.get(projectId);
  }

  private assertCanStore(body: ProjectSettingsDto): void {
    assertCanStoreCredentials(body, this.config);
  }
}

/** Credentials are stored only encrypted: without a key they are refused before anything is written. */
function assertCanStoreCredentials(body: ProjectSettingsDto, config: AppConfig): void {
  if (body.credentials && !config.ASK_ENCRYPTION_KEY) {
    throw invalidRequest('credentials: ASK_ENCRYPTION_KEY is not set on the server, so credentials cannot be stored');
  }
}

function toSettings(body: ProjectSettingsDto): ProjectSettingsInput {
  return {
    embeddingSettings: body.embedding === undefined ? undefined : body.embedding && { ...body.embedding },
    llmSettings: body.llm === undefined ? undefined : body.llm && { ...body.llm },
    retrievalSettings: body.retrieval === undefined ? undefined : body.retrieval && { ...body.retrieval },
    topK: body.topK,
    maxTokens: body.maxTokens,
    systemPrompt: body.systemPrompt,
    maxHistoryMessages: body.maxHistoryMessages,
  };
}
