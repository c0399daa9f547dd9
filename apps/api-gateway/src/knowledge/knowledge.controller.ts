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
import { ApiKeysRepository, IngestionsRepository } from '@ask/persistence';
import { keyRecheck } from '../auth/key-recheck';
import { serveStream, type StreamRoute } from '../sse/serve-stream';
import { INGESTION_STREAM_CAPS, ProcessStreams, StreamCaps } from '../sse/stream-caps';
import { uuidParam } from '../errors/params';
import { RateLimit } from '../rate-limit/rate-limit';
import { IngestInsightsDto, IngestKnowledgeDto } from './knowledge.dto';
import { KnowledgeService } from './knowledge.service';
import { sourceIds } from './source-ids';

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
    private readonly keys: ApiKeysRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    streams: ProcessStreams,
  ) {
    this.route = {
      caps: new StreamCaps(
        streams,
        config.ASK_KEY_PREFIX,
        'ingestion',
        { perAsk: config.ASK_STREAMS_PER_ASK, perProject: config.ASK_STREAMS_PER_PROJECT },
        INGESTION_STREAM_CAPS,
      ),
      relays: this.relays,
      maxBufferedBytes: config.ASK_STREAM_BUFFER_BYTES,
      keyRecheckMs: config.ASK_STREAM_KEY_RECHECK_MS,
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
    const uris = sourceIds('documents', 'uri', body.documents, (d) => d.uri);
    return this.knowledge.accept(
      projectId,
      'knowledge',
      body.documents.map((d, i) => ({ kind: 'document', uri: uris[i], title: d.title ?? uris[i], text: d.text })),
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
    const insights = body.insights ?? [];
    const recommendations = body.recommendations ?? [];
    // One id space per kind (an insight and a recommendation may share an id; each kind has its table).
    const insightIds = sourceIds('insights', 'id', insights, (i) => i.id);
    const recommendationIds = sourceIds('recommendations', 'id', recommendations, (r) => r.id);
    return this.knowledge.accept(projectId, 'insights', [
      ...insights.map((i, n) => ({
        kind: 'insight' as const,
        uri: insightIds[n],
        title: i.name,
        text: i.description,
      })),
      ...recommendations.map((r, n) => ({
        kind: 'recommendation' as const,
        uri: recommendationIds[n],
        title: r.title,
        text: r.body,
      })),
    ]);
  }

  /**
   * `POST …/reembed` → 202: rebuilds every vector of the project stored by another embedding model
   * with the current one, from the stored text (no body, or `{}`).
   * @throws AskError 400 for any other body (an array, a field); 404, 412, 429.
   */
  @Post('reembed')
  @HttpCode(HttpStatus.ACCEPTED)
  @RateLimit('ingest')
  reembed(
    @Param('projectId', uuidParam('projectId')) projectId: string,
    @Body() body: unknown,
  ): Promise<IngestionAccepted> {
    refuseReembedBody(body);
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
   * Last-Event-ID). A failure after the headers is a typed `error` event without an id, then the end;
   * so is a revoked key (401 `unauthorized`, within ASK_STREAM_KEY_RECHECK_MS).
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
    const keyStillValid = keyRecheck(request, this.keys);
    const target = { request, response, controller, streamId: ingestionId, projectId, keyStillValid };
    await serveStream(this.route, target, async (sse) => {
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

/**
 * `POST …/reembed` takes no settings: a body is absent or `{}`. An array, a scalar or a field is a
 * 400 (each field named as the validation pipe names unknown ones), not a silent 202.
 * @throws AskError 400 `invalid_request`.
 */
function refuseReembedBody(body: unknown): void {
  if (body === undefined || body === null) return;
  if (typeof body !== 'object' || Array.isArray(body))
    throw invalidRequest('body: reembed takes no body (send none, or {})');
  const fields = Object.keys(body);
  if (fields.length > 0) throw invalidRequest(fields.map((f) => `${f}: property ${f} should not exist`).join('; '));
}
