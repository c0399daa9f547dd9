import { Body, Controller, Get, HttpCode, HttpStatus, Param, Patch, Post } from '@nestjs/common';
import type { Project } from '@ask/persistence';
import { uuidParam } from '../errors/params';
import { CreateProjectDto, UpdateProjectDto } from './project.dto';
import { ProjectsService } from './projects.service';

/** Projects and their settings (`/api/v1/projects`). */
@Controller('api/v1/projects')
export class ProjectsController {
  constructor(private readonly projects: ProjectsService) {}

  /** `POST /api/v1/projects` → 201 the project (credentials never returned). */
  @Post()
  @HttpCode(HttpStatus.CREATED)
  create(@Body() body: CreateProjectDto): Promise<Project> {
    return this.projects.create(body);
  }

  /** `GET /api/v1/projects/:projectId`. @throws AskError 404. */
  @Get(':projectId')
  get(@Param('projectId', uuidParam('projectId')) projectId: string): Promise<Project> {
    return this.projects.get(projectId);
  }

  /** `PATCH /api/v1/projects/:projectId`: updates the given settings only. @throws AskError 404. */
  @Patch(':projectId')
  update(@Param('projectId', uuidParam('projectId')) projectId: string, @Body() body: UpdateProjectDto): Promise<Project> {
    return this.projects.update(projectId, body);
  }
}
