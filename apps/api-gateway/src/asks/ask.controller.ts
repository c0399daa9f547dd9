import {
  type BeforeApplicationShutdown,
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  HttpStatus,
  Inject,
  Param,
  Post,
  Req,
  Sse,
} from '@nestjs/common';
import type { Request } from 'express';
import { Observable } from 'rxjs';
import { TERMINAL_EVENTS } from '@ask/ask-contracts';
import { invalidRequest, llmUpstream, notFound } from '@ask/ask-errors';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { AskEventStream, FencedPublishError } from '@ask/event-stream';
import { uuidParam } from '../errors/params';
import { AskEventsAccess } from '../auth/access.decorators';
import { canSeeProject, principalOf } from '../auth/principal';
import { RateLimit } from '../rate-limit/rate-limit';
import { AskService } from './ask.service';
import { AskDto, type AskAccepted } from './ask.dto';

/** A server-sent event as Nest writes it. */
interface SseMessage {
  id: string;
  type: string;
  data: unknown;
}

/** How long after an ask's deadline the events route waits for the worker's own terminal event (ms). */
const DEADLINE_GRACE_MS = 10_000;

@Controller('api/v1')
export class AskController implements BeforeApplicationShutdown {
  /** Open SSE relays; ended on shutdown so the HTTP server can close (clients resume elsewhere with Last-Event-ID). */
  private readonly relays = new Set<AbortController>();

  constructor(
    private readonly asks: AskService,
    private readonly events: AskEventStream,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** SIGTERM: end every open event stream so the server closes; each client reconnects with Last-Event-ID. */
  beforeApplicationShutdown(): void {
    for (const relay of this.relays) relay.abort();
  }

  /**
   * `POST /api/v1/projects/:projectId/ask` → 202 `{ askId, sessionId, eventsUrl }`; `eventsUrl` carries
   * the ask's events capability token. Counts against the project's `ask` rate limit (429).
   */
  @Post('projects/:projectId/ask')
  @HttpCode(HttpStatus.ACCEPTED)
  @RateLimit('ask')
  ask(@Param('projectId', uuidParam('projectId')) projectId: string, @Body() body: AskDto): Promise<AskAccepted> {
    return this.asks.accept(projectId, body);
  }

  /**
   * `GET /api/v1/asks/:askId/events`: the ask's events as SSE, each with its stream id; resumes after
   * `Last-Event-ID`. Ends after `done` or `error`. Open to a key of the ask's project, the admin key,
   * or the ask's capability token (`?token=`, checked by the auth guard).
   * @throws AskError 400 for a Last-Event-ID that is not a stream id; 404 for an unknown ask or an
   *   ask of another project (the same answer, so existence is not revealed).
   */
  @Get('asks/:askId/events')
  @Sse()
  @AskEventsAccess()
  async stream(
    @Param('askId', uuidParam('askId')) askId: string,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() request: Request,
  ): Promise<Observable<SseMessage>> {
    if (lastEventId !== undefined && lastEventId !== '' && !AskEventStream.isStreamId(lastEventId)) {
      throw invalidRequest('Last-Event-ID: must be an event id of this stream (like 1718000000000-0) or absent');
    }
    const meta = await this.events.meta(askId);
    const principal = principalOf(request);
    const allowed = principal.kind === 'ask-token' ? principal.askId === askId : meta !== null && canSeeProject(principal, meta.projectId);
    if (!meta || !allowed) throw notFound('ask not found');
    return new Observable<SseMessage>((subscriber) => {
      const controller = new AbortController();
      this.relays.add(controller);
      controller.signal.addEventListener('abort', () => this.relays.delete(controller), { once: true });
      request.on('close', () => controller.abort());
      // Past the ask's deadline (plus a grace for the worker's own 504) no worker will finish it: the
      // stream ends with a typed 504 instead of leaving the client waiting (e.g. jobs lost with Redis).
      const deadlineAt = Date.parse(meta.acceptedAt) + this.config.ASK_DEADLINE_MS + DEADLINE_GRACE_MS;
      (async () => {
        let ended = false;
        for await (const event of this.events.read(askId, { after: lastEventId || undefined, signal: controller.signal, deadlineAt })) {
          subscriber.next({ id: event.id, type: event.type, data: event.data });
          ended = TERMINAL_EVENTS.has(event.type);
        }
        if (!ended && !controller.signal.aborted && Date.now() >= deadlineAt) {
          const error = llmUpstream('the ask passed its deadline without an answer', { timeout: true }).toEvent();
          // Refused when the stream already ended: its terminal event stays the last one.
          const id = await this.events.publish(askId, 'error', error).catch((err) => {
            if (err instanceof FencedPublishError) return null;
            throw err;
          });
          if (id) subscriber.next({ id, type: 'error', data: error });
        }
        subscriber.complete();
      })()
        .catch((err) => subscriber.error(err))
        .finally(() => this.relays.delete(controller));
      return () => controller.abort();
    });
  }
}
