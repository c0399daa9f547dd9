import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { notFound } from '@ask/ask-errors';
import { type ApiKeyInfo, ApiKeysRepository, ProjectsRepository } from '@ask/persistence';
import { uuidParam } from '../errors/params';
import { AdminOnly } from './access.decorators';
import { CreateApiKeyDto, type CreatedApiKeyBody } from './keys.dto';

/**
 * A project's API keys (admin key only). A key is shown once, in the 201 answer of its creation;
 * only its SHA-256 is stored, and the list shows ids and public prefixes, never the key or its hash.
 */
@Controller('api/v1/projects/:projectId/keys')
@AdminOnly()
export class KeysController {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly keys: ApiKeysRepository,
  ) {}

  /** `POST …/keys` → 201 `{ id, projectId, prefix, name, key, createdAt }`. @throws AskError 404 for an unknown project. */
  @Post()
  @HttpCode(HttpStatus.CREATED)
  async create(
    @Param('projectId', uuidParam('projectId')) projectId: string,
    @Body() body: CreateApiKeyDto,
  ): Promise<CreatedApiKeyBody> {
    await this.requireProject(projectId);
    const created = await this.keys.create(projectId, body.name ?? null);
    return {
      id: created.id,
      projectId,
      prefix: created.prefix,
      name: body.name ?? null,
      key: created.key,
      createdAt: created.createdAt,
    };
  }

  /** `GET …/keys` → 200 `{ keys: [{ id, projectId, prefix, name, createdAt, revokedAt }] }`, newest first. @throws AskError 404. */
  @Get()
  async list(@Param('projectId', uuidParam('projectId')) projectId: string): Promise<{ keys: ApiKeyInfo[] }> {
    await this.requireProject(projectId);
    return { keys: await this.keys.list(projectId) };
  }

  /** `DELETE …/keys/:keyId` → 204; the key stops working at once (idempotent). @throws AskError 404. */
  @Delete(':keyId')
  @HttpCode(HttpStatus.NO_CONTENT)
  async revoke(
    @Param('projectId', uuidParam('projectId')) projectId: string,
    @Param('keyId', uuidParam('keyId')) keyId: string,
  ): Promise<void> {
    if (!(await this.keys.revoke(projectId, keyId))) throw notFound('key not found');
  }

  private async requireProject(projectId: string): Promise<void> {
    if (!(await this.projects.findById(projectId))) throw notFound('project not found');
  }
}
