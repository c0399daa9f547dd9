import { Controller, Get, Param } from '@nestjs/common';
import { notFound } from '@ask/ask-errors';
import { ProviderCallsRepository, SessionsRepository } from '@ask/persistence';
import { uuidParam } from '../errors/params';
import { type SessionUsageDto, toSessionUsageDto } from './session-usage.dto';

/**
 * One session's token usage and cost from `provider_calls` (the dashboard's picture
 * of a session), by ask, summed in SQL so each figure is exactly its rows'.
 */
@Controller('api/v1/projects/:projectId/sessions/:sessionId/usage')
export class SessionUsageController {
  constructor(
    private readonly sessions: SessionsRepository,
    private readonly calls: ProviderCallsRepository,
  ) {}

  /**
   * `GET /api/v1/projects/:projectId/sessions/:sessionId/usage` → 200 {@link SessionUsageDto}.
   * Project key of `:projectId` or the admin key (the global guard).
   * @throws AskError 400 for an id that is not a UUID; 404 when the session is not one of the
   *   project's (or was deleted: its calls stay in the ledger and in the project's usage).
   */
  @Get()
  async get(
    @Param('projectId', uuidParam('projectId')) projectId: string,
    @Param('sessionId', uuidParam('sessionId')) sessionId: string,
  ): Promise<SessionUsageDto> {
    if (!(await this.sessions.findForProject(projectId, sessionId))) throw notFound('session not found');
    return toSessionUsageDto(sessionId, await this.calls.summariseSession(projectId, sessionId));
  }
}
