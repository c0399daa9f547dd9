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
import type { IngestionAccepted, IngestionView } from '@ask/ask-contracts';
import { invalidRequest, notFound } from '@ask/ask-errors';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { IngestionEventStream } from '@ask/event-stream';
import { IngestionsRepository } from '@ask/persistence';
import { serveStream, type StreamRoute } from '../sse/serve-stream';
import { StreamCaps } from '../sse/stream-caps';
import { uuidParam } from '../errors/params';
import { RateLimit } from '../rate-limit/rate-limit';
import { IngestInsightsDto, IngestKnowledgeDto } from './knowledge.dto';
import { KnowledgeService } from './knowledge.service';

/**
 * Loads documents, insights and recommendations into a project, and re-embeds it, as queued jobs:
 * each POST validates and stores the upload and answers 202 with the ingestion id; the ingestion
 * worker chunks (by tokens with overlap), embeds and stores it. Progress is read with
 * `GET …/ingestions/:ingestionId` or followed as SSE on `…/events`. Re-sending a document (same
 * `uri`) replaces its chunks; an unchanged one is skipped. Every route is a project route (its key
 * or the admin key; another project's ingestion is a 404).
 */
@Controller('api/v1/projects/:projectId')
export class KnowledgeController implements BeforeApplicationShutdown {
  /** Open SSE relays; ended on shutdown so the HTTP server can close (clients resume with Last-Event-ID). */
  private readonly relays = new Set<AbortController>();
  /** The events route's caps (the ask streams' limits, counted apart), relays, buffer limit, logger. */
  private readonly route: StreamRoute;

  constructor(
    private readonly knowledge: KnowledgeService,
    private readonly ingestions: IngestionsRepository,
    private readonly events: IngestionEventStream,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.route = {
      caps: new StreamCaps(
        { perAsk: config.ASK_STREAMS_PER_ASK, perProject: config.ASK_STREAMS_PER_PROJECT },
        { perStream: 'streams_per_ingestion', perProject: 'ingestion_streams_per_project' },
      ),
      relays: this.relays,
      maxBufferedBytes: config.ASK_STREAM_BUFFER_BYTES,
      logger: new Logger('SSE'),
    };
  }

  beforeApplicationShutdown(): void {
    for (const relay of this.relays) relay.abort();
  }

  /** `POST …/knowledge` → 202 `{ ingestionId, eventsUrl, statusUrl }`. @throws AskError 404, 412, 409, 400, 429. */
  @Post('knowledge')
  @HttpCode(HttpStatus.ACCEPTED)
  @RateLimit('ingest')
  ingestKnowledge(
    @Param('projectId', uuidParam('projectId')) projectId: string,
    @Body() body: IngestKnowledgeDto,
  ): Promise<IngestionAccepted> {
    return this.knowledge.accept(
      projectId,
      'knowledge',
      body.documents.map((d) => ({ kind: 'document', uri: d.uri, title: d.title ?? d.uri, text: d.text })),
    );
  }

  /** `POST …/insights` → 202 `{ ingestionId, eventsUrl, statusUrl }`. @throws AskError 404, 412, 409, 400, 429. */
  @Post('insights')
  @HttpCode(HttpStatus.ACCEPTED)
  @RateLimit('ingest')
  ingestInsights(
    @Param('projectId', uuidParam('projectId')) projectId: string,
    @Body() body: IngestInsightsDto,
  ): Promise<IngestionAccepted> {
    return this.knowledge.accept(projectId, 'insights', [
      ...(body.insights ?? []).map((i) => ({
        kind: 'insight' as const,
        uri: i.id,
        title: i.name,
        text: i.description,
      })),
      ...(body.recommendations ?? []).map((r) => ({
        kind: 'recommendation' as const,
        uri: r.id,
        title: r.title,
        text: r.body,
      })),
    ]);
  }

  /**
   * `POST …/reembed` → 202: rebuilds every vector of the project stored by another embedding model
   * with the current one, from the stored text (no body). @throws AskError 404, 412, 429.
   */
  @Post('reembed')
  @HttpCode(HttpStatus.ACCEPTED)
  @RateLimit('ingest')
  reembed(@Param('projectId', uuidParam('projectId')) projectId: string): Promise<IngestionAccepted> {
    return this.knowledge.accept(projectId, 'reembed', []);
  }

  /** `GET …/ingestions/:ingestionId` → the ingestion's status, counts and failures. @throws AskError 404. */
  @Get('ingestions/:ingestionId')
  async status(
    @Param('projectId', uuidParam('projectId')) projectId: string,
    @Param('ingestionId', uuidParam('ingestionId')) ingestionId: string,
  ): Promise<IngestionView> {
    const view = await this.ingestions.find(projectId, ingestionId);
    if (!view) throw notFound('ingestion not found');
    return view;
  }

  /**
   * `GET …/ingestions/:ingestionId/events`: the ingestion's events as SSE (`started`, `progress`,
   * `document_failed`, then `done` or `error`), each with its stream id; resumes after
   * `Last-Event-ID`. A finished ingestion whose stream has expired answers its end from the row. New
   * events come through the process's shared stream readers (no Redis connection per client); a
   * client that leaves more than ASK_STREAM_BUFFER_BYTES unread is dropped (it resumes with its
   * Last-Event-ID). A failure after the headers is a typed `error` event without an id, then the end.
   * @throws AskError 400 for a malformed Last-Event-ID; 404 for an unknown ingestion; 429
   *   `rate_limited` over ASK_STREAMS_PER_ASK streams of one ingestion or ASK_STREAMS_PER_PROJECT
   *   ingestion streams of one project (`details` `limit=streams_per_ingestion|ingestion_streams_per_project max=N`).
   */
  @Get('ingestions/:ingestionId/events')
  async stream(
    @Param('projectId', uuidParam('projectId')) projectId: string,
    @Param('ingestionId', uuidParam('ingestionId')) ingestionId: string,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() request: Request,
    @Res() response: Response,
  ): Promise<void> {
    if (lastEventId !== undefined && lastEventId !== '' && !IngestionEventStream.isStreamId(lastEventId)) {
      throw invalidRequest('Last-Event-ID: must be an event id of this stream (like 1718000000000-0) or absent');
    }
    // Listen before the first await: a client that leaves during the checks must not hold a relay.
    const controller = new AbortController();
    response.on('close', () => controller.abort());
    const view = await this.ingestions.find(projectId, ingestionId);
    if (!view) throw notFound('ingestion not found');
    if (controller.signal.aborted) return;
    await serveStream(this.route, { request, response, controller, streamId: ingestionId, projectId }, async (sse) => {
      // A finished run whose stream has expired (or was lost with Redis): its row says how it ended.
      if ((view.status === 'completed' || view.status === 'failed') && (await this.events.length(ingestionId)) === 0) {
        if (!lastEventId) {
          if (view.status === 'completed')
            sse.send({ id: '0-1', type: 'done', data: { status: 'completed', counts: view.counts } });
          else if (view.error) sse.send({ id: '0-1', type: 'error', data: view.error });
        }
        return;
      }
      for await (const event of this.events.read(ingestionId, {
        after: lastEventId || undefined,
        signal: controller.signal,
      })) {
        if (!sse.send({ id: event.id, type: event.type, data: event.data })) break;
        await sse.drained();
      }
    });
  }
}
