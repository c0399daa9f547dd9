import { Body, Controller, Headers, HttpCode, HttpStatus, Param, Post, Req, Sse } from '@nestjs/common';
import { Get } from '@nestjs/common';
import { uuidParam } from '../errors/params';
import type { Request } from 'express';
import { Observable } from 'rxjs';
import { notFound } from '@ask/ask-errors';
import { AskEventStream } from '@ask/event-stream';
import { AskService } from './ask.service';
import { AskDto, type AskAccepted } from './ask.dto';

/** A server-sent event as Nest writes it. */
interface SseMessage {
  id: string;
  type: string;
  data: unknown;
}



@Controller('api/v1')
export class AskController {
  constructor(
    private readonly asks: AskService,
    private readonly events: AskEventStream,
  ) {}

  /** `POST /api/v1/projects/:projectId/ask` → 202 `{ askId, sessionId, eventsUrl }`. */
  @Post('projects/:projectId/ask')
  @HttpCode(HttpStatus.ACCEPTED)
  ask(@Param('projectId', uuidParam('projectId')) projectId: string, @Body() body: AskDto): Promise<AskAccepted> {
    return this.asks.accept(projectId, body);
  }

  /**
   * `GET /api/v1/asks/:askId/events`: the ask's events as SSE, each with its stream id; resumes after
   * `Last-Event-ID`. Ends after `done` or `error`.
   * @throws AskError 404 for an unknown ask.
   */
  @Get('asks/:askId/events')
  @Sse()
  async stream(
    @Param('askId', uuidParam('askId')) askId: string,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() request: Request,
  ): Promise<Observable<SseMessage>> {
    const meta = await this.events.meta(askId);
    if (!meta) throw notFound('ask not found');
    return new Observable<SseMessage>((subscriber) => {
      const controller = new AbortController();
      request.on('close', () => controller.abort());
      (async () => {
        for await (const event of this.events.read(askId, { after: lastEventId, signal: controller.signal })) {
          subscriber.next({ id: event.id, type: event.type, data: event.data });
        }
        subscriber.complete();
      })().catch((err) => subscriber.error(err));
      return () => controller.abort();
    });
  }
}
