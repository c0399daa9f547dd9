import { Body, Controller, Get, HttpCode, HttpStatus, Param, Patch, Post, Req } from '@nestjs/common';
import type { Request } from 'express';
import type { Project } from '@ask/persistence';
import { AdminOnly } from '../auth/access.decorators';
import { principalOf } from '../auth/principal';
import { uuidParam } from '../errors/params';
import { CreateProjectDto, UpdateProjectDto } from './project.dto';
import { type ProjectRead, ProjectsService } from './projects.service';

/** Projects and their settings (`/api/v1/projects`). */
@Controller('api/v1/projects')
export class ProjectsController {
  constructor(private readonly projects: ProjectsService) {}

  /** `POST /api/v1/projects` → 201 the project (credentials never returned). Admin key only. */
  @Post()
  @HttpCode(HttpStatus.CREATED)
  @AdminOnly()
  create(@Body() body: CreateProjectDto, @Req() request: Request): Promise<Project> {
    return this.projects.create(body, principalOf(request));
  }

  /** `GET /api/v1/projects` → 200 `{ projects }`, newest first (at most 1,000). Admin key only. */
  @Get()
  @AdminOnly()
  async list(): Promise<{ projects: Project[] }> {
    return { projects: await this.projects.list() };
  }

  /** `GET /api/v1/projects/:projectId`. @throws AskError 404. */
  @Get(':projectId')
  get(@Param('projectId', uuidParam('projectId')) projectId: string): Promise<ProjectRead> {
    return this.projects.get(projectId);
  }

  /**
   * `PATCH /api/v1/projects/:projectId`: updates the given settings only; only the admin key may set a
   * provider `baseUrl` outside ASK_PROVIDER_URL_ALLOWLIST. @throws AskError 404, 400, 403.
   */
  @Patch(':projectId')
  update(
    @Param('projectId', uuidParam('projectId')) projectId: string,
    @Body() body: UpdateProjectDto,
    @Req() request: Request,
  ): Promise<ProjectRead> {
    return this.projects.update(projectId, body, principalOf(request));
  }
}
