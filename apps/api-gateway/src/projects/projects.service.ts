import { Inject, Injectable } from '@nestjs/common';
import { invalidRequest, notFound } from '@ask/ask-errors';
import { ambientCredentialsAllowed, APP_CONFIG, type AppConfig } from '@ask/config';
import {
  LearnedWindowsRepository,
  type Project,
  type ProjectSettingsInput,
  ProjectsRepository,
  UsageRepository,
} from '@ask/persistence';
import { resolveModel } from '@ask/model-catalog';
import {
  calibrationBaseCounter,
  learnScriptCalibration,
  SCRIPT_CALIBRATION_DEFAULTS,
  selectTokenCounter,
} from '@ask/token-counting';
import { egressPolicyFor } from '@ask/llm-providers';
import type { Principal } from '../auth/principal';
import { assertCloudCredentialsPresent, assertCredentialsAccepted } from './credentials-policy';
import { assertEndpointsAllowed, dropsCredentials } from './endpoint-policy';
import type { CreateProjectDto, ProjectSettingsDto, UpdateProjectDto } from './project.dto';
import { assertSettingsFit } from './settings-fit';

/**
 * Creates, reads and updates projects. Credentials in a body are encrypted at rest by the repository
 * and never come back: the public shape says only whether some are stored. Provider endpoints
 * (`baseUrl`) are checked against the operator's egress policy before anything is written
 * (`assertEndpointsAllowed`), and moving a provider to another host drops the stored credentials
 * unless new ones come with it.
 */
@Injectable()
export class ProjectsService {
  constructor(
    private readonly projects: ProjectsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly windows: LearnedWindowsRepository,
    private readonly usage: UsageRepository,
  ) {}

  /**
   * @throws AskError 400 when credentials are sent and no ASK_ENCRYPTION_KEY is set, when a credential
   *   fails its schema (`assertCredentialsAccepted`), when the settings leave no room for a prompt
   *   (`assertSettingsFit`), or a `baseUrl` is refused; 412 when a Vertex or Bedrock block comes without
   *   its credentials (`assertCloudCredentialsPresent`); nothing is stored then.
   */
  async create(body: CreateProjectDto, principal: Principal): Promise<Project> {
    this.assertCanStore(body);
    assertSettingsFit({ llm: body.llm, maxTokens: body.maxTokens });
    await assertEndpointsAllowed(body, null, principal, egressPolicyFor(this.config));
    // A new project's id is in no operator list yet: a Vertex or Bedrock block needs its credentials.
    await assertCloudCredentialsPresent(body, null, false, async () => body.credentials ?? null);
    const project = await this.projects.create({ ...toSettings(body), name: body.name });
    if (body.credentials) await this.projects.setCredentials(project.id, body.credentials);
    return (await this.projects.findById(project.id)) as Project;
  }

  /** Every project, newest first (at most 1,000). */
  list(): Promise<Project[]> {
    return this.projects.list();
  }

  /** The project with what planning learned for it (`learned`). @throws AskError 404 not_found. */
  async get(projectId: string): Promise<ProjectRead> {
    const project = await this.projects.findById(projectId);
    if (!project) throw notFound('project not found');
    return { ...project, learned: await this.learned(project) };
  }

  /**
   * What the worker learned from the provider for this project: windows the provider
   * disclosed that are smaller than the configured one, and, when the project's model plans with the
   * approximate estimate, the calibration factor per script class (learned from the project's own
   * reported usage and disclosed overflow sizes for its model; token-counting `learnScriptCalibration`).
   */
  private async learned(project: Project): Promise<LearnedPlanning> {
    const windows = (await this.windows.list(project.id)).map(({ provider, model, window, disclosedAt }) => ({
      provider,
      model,
      window,
      disclosedAt,
    }));
    const llm = project.llmSettings;
    if (!llm) return { windows, calibration: null };
    const ref = { provider: llm.provider, model: llm.model, baseUrl: llm.baseUrl };
    const choice = selectTokenCounter(ref, resolveModel(ref).tokenizer);
    if (choice.exactPlan) return { windows, calibration: null };
    const floor = calibrationBaseCounter().id;
    // The project's own records: what its plans learn from (another project's never move them).
    const records = await this.usage.recentPerScript(llm.model, floor, SCRIPT_CALIBRATION_DEFAULTS.recent, project.id);
    const byScript = learnScriptCalibration(records.map(({ masses, ...r }) => ({ ...r, masses: masses ?? undefined })));
    return { windows, calibration: { model: llm.model, base: floor, byScript } };
  }

  /**
   * Applies only the fields present in the body. The settings as they would be after the update must
   * leave room for a prompt (`assertSettingsFit`), a `baseUrl` must pass `assertEndpointsAllowed`,
   * credentials their schema (`assertCredentialsAccepted`), and a Vertex or Bedrock block must have its
   * credentials unless the operator enabled ambient ones for the project (`assertCloudCredentialsPresent`).
   * @throws AskError 404 not_found; 400 invalid_request, 403 forbidden, 412 llm_not_configured /
   *   embedding_not_configured (nothing is stored).
   */
  async update(projectId: string, body: UpdateProjectDto, principal: Principal): Promise<ProjectRead> {
    this.assertCanStore(body);
    const stored = await this.get(projectId);
    if (body.llm !== undefined || body.maxTokens !== undefined) {
      assertSettingsFit({
        llm: body.llm === undefined ? stored.llmSettings : body.llm,
        maxTokens: body.maxTokens ?? stored.maxTokens,
      });
    }
    await assertEndpointsAllowed(body, stored, principal, egressPolicyFor(this.config));
    await assertCloudCredentialsPresent(body, stored, ambientCredentialsAllowed(this.config, projectId), async () => {
      if (body.credentials) return body.credentials;
      if (!stored.hasCredentials || dropsCredentials(body, stored)) return null;
      return this.projects.getCredentials(projectId).catch(() => undefined);
    });
    const updated = await this.projects.updateSettings(projectId, { ...toSettings(body), name: body.name });
    if (!updated) throw notFound('project not found');
    // New LLM settings may point at another server: windows disclosed by the old one no longer hold.
    if (body.llm !== undefined) await this.windows.forget(projectId);
    if (body.credentials) await this.projects.setCredentials(projectId, body.credentials);
    else if (dropsCredentials(body, stored)) await this.projects.setCredentials(projectId, null);
    return this.get(projectId);
  }

  private assertCanStore(body: ProjectSettingsDto): void {
    assertCanStoreCredentials(body, this.config);
    assertCredentialsAccepted(body);
  }
}

/** What planning learned for a project, on its read (`GET`/`PATCH /api/v1/projects/:projectId`). */
export interface LearnedPlanning {
  /** Windows (tokens) the provider disclosed in overflow answers, smaller than the configured window. */
  windows: Array<{ provider: string; model: string; window: number; disclosedAt: Date }>;
  /** Per-script calibration of the approximate estimate for the project's model; null with an exact counter. */
  calibration: {
    model: string;
    base: string;
    /** `factor` per floor token of the class (`base`), or per estimate token with `basis: 'estimate'`. */
    byScript: Record<string, { factor: number; basis?: 'estimate'; samples: number } | undefined>;
  } | null;
}

/** A project as `GET /api/v1/projects/:projectId` returns it. */
export type ProjectRead = Project & { learned: LearnedPlanning };

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
    memorySettings: body.memory === undefined ? undefined : body.memory && { ...body.memory },
    topK: body.topK,
    maxTokens: body.maxTokens,
    systemPrompt: body.systemPrompt,
    maxHistoryMessages: body.maxHistoryMessages,
  };
}
