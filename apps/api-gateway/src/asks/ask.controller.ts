import {
  type BeforeApplicationShutdown,
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  HttpStatus,
  Inject,
  Logger,
  Param,
  Post,
  Req,
  Res,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { AskError, AskErrorCode, invalidRequest, notFound } from '@ask/ask-errors';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { AskEventRelay, isValidStreamId } from '@ask/event-stream';
import { ApiKeysRepository, AsksRepository } from '@ask/persistence';
import { uuidParam } from '../errors/params';
import { AskEventsAccess } from '../auth/access.decorators';
import { keyRecheck } from '../auth/key-recheck';
import { canSeeProject, principalOf } from '../auth/principal';
import { RateLimit } from '../rate-limit/rate-limit';
import { AskService } from './ask.service';
import { AskDto, type AskAccepted } from './ask.dto';
import { serveStream, type StreamRoute } from '../sse/serve-stream';
import { ProcessStreams, StreamCaps } from '../sse/stream-caps';

/** How long after an ask's deadline the events route waits for the worker's own terminal event (ms). */
const DEADLINE_GRACE_MS = 10_000;

@Controller('api/v1')
export class AskController implements BeforeApplicationShutdown {
  /** Open SSE relays; ended on shutdown so the HTTP server can close (clients resume elsewhere with Last-Event-ID). */
  private readonly relays = new Set<AbortController>();
  /** The events route's caps, relays, buffer limit and logger ({@link serveStream}). */
  private readonly route: StreamRoute;

  constructor(
    private readonly asks: AskService,
    private readonly relay: AskEventRelay,
    private readonly records: AsksRepository,
    private readonly keys: ApiKeysRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    streams: ProcessStreams,
  ) {
    this.route = {
      caps: new StreamCaps(streams, config.ASK_KEY_PREFIX, 'ask', {
        perAsk: config.ASK_STREAMS_PER_ASK,
        perProject: config.ASK_STREAMS_PER_PROJECT,
      }),
      relays: this.relays,
      maxBufferedBytes: config.ASK_STREAM_BUFFER_BYTES,
      keyRecheckMs: config.ASK_STREAM_KEY_RECHECK_MS,
      logger: new Logger('SSE'),
    };
  }

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
  ask(
    @Param('projectId', uuidParam('projectId')) projectId: string,
    @Body() body: AskDto,
    @Req() request: Request,
  ): Promise<AskAccepted> {
    const principal = principalOf(request);
    return this.asks.accept(projectId, body, principal.kind === 'project' ? principal.keyId : undefined);
  }

  /**
   * `GET /api/v1/asks/:askId/events`: the ask's events as SSE, each with its stream id; resumes after
   * `Last-Event-ID`. Ends after `done` or `error` (at once when `Last-Event-ID` is the terminal event).
   * Open to a key of the ask's project, the admin key, or the ask's capability token (`?token=`,
   * checked by the auth guard). New events come through the process's shared stream readers, not a
   * Redis connection per client. Past the deadline (plus a grace for the worker's own 504) the ask
   * is ended with a 504 `error`, appended atomically only if the stream has no terminal event.
   * A failure after the headers (Redis gone) is a typed `error` event without an id, then the end:
   * the client resumes with its Last-Event-ID. A stream opened with a project key that is then
   * revoked ends within ASK_STREAM_KEY_RECHECK_MS with a 401 `unauthorized` `error` event.
   * @throws AskError 400 for a Last-Event-ID that is not the id of an event of this stream; 404 for an
   *   unknown ask or an ask of another project (the same answer, so existence is not revealed); 429
   *   `rate_limited` over ASK_STREAMS_PER_ASK or ASK_STREAMS_PER_PROJECT open streams; 503
   *   `internal_error` for an accepted, still open ask whose Redis state is gone (being rebuilt by the
   *   reconciler: reconnect with the same Last-Event-ID).
   */
  @Get('asks/:askId/events')
  @AskEventsAccess()
  async stream(
    @Param('askId', uuidParam('askId')) askId: string,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    if (lastEventId !== undefined && lastEventId !== '' && !isValidStreamId(lastEventId)) {
      throw invalidRequest('Last-Event-ID: must be an event id of this stream (like 1718000000000-0) or absent');
    }
    // Listen before the first await: a client that leaves during the checks must not hold a relay.
    const controller = new AbortController();
    response.on('close', () => controller.abort());
    // The meta and the first page of the stream in one round trip; the page is used only once allowed.
    const { meta, resumePoint } = await this.relay.metaAndResumePoint(askId, lastEventId);
    const principal = principalOf(request);
    const allowed =
      principal.kind === 'ask-token'
        ? principal.askId === askId
        : meta !== null && canSeeProject(principal, meta.projectId);
    if (!meta) await this.refuseLost(askId, request);
    if (!meta || !allowed) throw notFound('ask not found');
    const start = await resumePoint();
    if (controller.signal.aborted) return;
    // Past the ask's deadline (plus a grace for the worker's own 504) no worker will finish it: the
    // stream ends with a typed 504 instead of leaving the client waiting (e.g. jobs lost with Redis).
    const deadlineAt = Date.parse(meta.acceptedAt) + this.config.ASK_DEADLINE_MS + DEADLINE_GRACE_MS;
    await serveStream(
      this.route,
      {
        request,
        response,
        controller,
        streamId: askId,
        projectId: meta.projectId,
        keyStillValid: keyRecheck(request, this.keys, meta.keyId),
      },
      async (sse) => {
        const end = await this.relay.relay(askId, start, {
          signal: controller.signal,
          deadlineAt,
          pageBytes: this.route.maxBufferedBytes,
          write: (events, phase) => {
            if (phase === 'catch-up') {
              // Stored events (a replay or a resume, of any size): paced by the client's reads, in
              // writes bounded by the buffer, never dropped for the backlog itself.
              return sse.sendPaced(events, controller.signal).then((written) => {
                if (!written) controller.abort();
              });
            }
            // Live: one write per batch the hub hands over.
            if (!sse.sendAll(events)) {
              // Gone, or dropped for leaving too much unread: it resumes with its Last-Event-ID.
              controller.abort();
              return;
            }
            return sse.drained();
          },
        });
        if (end.reason === 'failed') throw end.cause;
      },
    );
  }

  /**
   * An ask Redis no longer knows (a restart without persistence, a flush) but the `asks` table holds
   * as accepted and open: the reconciler re-opens it within RECONCILE_MIN_AGE_MS +
   * ASK_RECONCILE_INTERVAL_MS, so the caller may come back (typed 503), instead of a 404 that would
   * end an ask that is still running.
   * @throws AskError 503 `internal_error` when the ask is the caller's and open; returns otherwise.
   */
  private async refuseLost(askId: string, request: Request): Promise<void> {
    const record = await this.records.find(askId);
    if (!record || record.state !== 'accepted') return;
    const principal = principalOf(request);
    const allowed =
      principal.kind === 'ask-token' ? principal.askId === askId : canSeeProject(principal, record.projectId);
    if (!allowed) return;
    throw new AskError(AskErrorCode.InternalError, {
      status: 503,
      error: 'service unavailable',
      details: "the ask's events are being restored after Redis lost them; reconnect with Last-Event-ID shortly",
    });
  }
}
