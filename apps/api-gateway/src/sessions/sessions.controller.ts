import { Controller, Delete, Get, HttpCode, HttpStatus, Param } from '@nestjs/common';
import { notFound } from '@ask/ask-errors';
import { AskEventStream, FencedPublishError } from '@ask/event-stream';
import { AsksRepository, ProjectsRepository, SessionsRepository } from '@ask/persistence';
import { uuidParam } from '../errors/params';

/** A project's ask sessions: list, read one with its messages, delete one. */
@Controller('api/v1/projects/:projectId/sessions')
export class SessionsController {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly sessions: SessionsRepository,
    private readonly asks: AsksRepository,
    private readonly events: AskEventStream,
  ) {}

  /** Sessions of the project, newest first. @throws AskError 404 for an unknown project. */
  @Get()
  async list(@Param('projectId', uuidParam('projectId')) projectId: string) {
    await this.requireProject(projectId);
    return { sessions: await this.sessions.list(projectId) };
  }

  /** One session with its messages, oldest first. @throws AskError 404. */
  @Get(':sessionId')
  async get(
    @Param('projectId', uuidParam('projectId')) projectId: string,
    @Param('sessionId', uuidParam('sessionId')) sessionId: string,
  ) {
    const session = await this.sessions.findForProject(projectId, sessionId);
    if (!session) throw notFound('session not found');
    const messages = await this.sessions.history(sessionId);
    return {
      ...session,
      messages: messages.map((m) => ({
        id: m.id,
        askId: m.askId,
        question: m.question,
        answer: m.answer,
        promptTokens: m.promptTokens,
        completionTokens: m.completionTokens,
        model: m.model,
        // The turn's budget badge and sources as the live view showed them (null / [] for older answers).
        budget: m.budget,
        sources: m.sources,
        createdAt: m.createdAt,
      })),
    };
  }

  /**
   * Deletes the session and its messages → 204. An ask still running in it ends at once with one
   * `error` 404 `not_found`: the worker's next publish is refused (the stream has ended), so it stops
   * and calls the provider no more. @throws AskError 404.
   */
  @Delete(':sessionId')
  @HttpCode(HttpStatus.NO_CONTENT)
  async remove(
    @Param('projectId', uuidParam('projectId')) projectId: string,
    @Param('sessionId', uuidParam('sessionId')) sessionId: string,
  ): Promise<void> {
    const running = await this.asks.openInSession(projectId, sessionId);
    const deleted = await this.sessions.delete(projectId, sessionId);
    if (!deleted) throw notFound('session not found');
    for (const ask of running) {
      const error = notFound(`session ${sessionId} was deleted while the ask was running`).toEvent();
      const ended = await this.events.publish(ask.id, 'error', error).then(
        () => true,
        (err) => {
          // Already ended on its own: the reconciler records how, from the stream.
          if (err instanceof FencedPublishError) return false;
          throw err;
        },
      );
      if (ended) await this.asks.finish(ask.id, 'error', error.code);
    }
  }

  private async requireProject(projectId: string): Promise<void> {
    if (!(await this.projects.findById(projectId))) throw notFound('project not found');
  }
}
