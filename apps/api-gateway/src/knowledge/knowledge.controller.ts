import {
  type BeforeApplicationShutdown,
  Body,
  Controller,
  Get,
  Headers,
  HttpCode,
  HttpStatus,
  Param,
  Post,
  Req,
  Sse,
} from '@nestjs/common';
import type { Request } from 'express';
import { Observable } from 'rxjs';
import type { IngestionAccepted, IngestionView } from '@ask/ask-contracts';
import { invalidRequest, notFound } from '@ask/ask-errors';
import { IngestionEventStream } from '@ask/event-stream';
import { IngestionsRepository } from '@ask/persistence';
import { uuidParam } from '../errors/params';
import { RateLimit } from '../rate-limit/rate-limit';
import { IngestInsightsDto, IngestKnowledgeDto } from './knowledge.dto';
import { KnowledgeService } from './knowledge.service';

/** A server-sent event as Nest writes it. */
interface SseMessage {
  id: string;
  type: string;
  data: unknown;
}

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

  constructor(
    private readonly knowledge: KnowledgeService,
    private readonly ingestions: IngestionsRepository,
    private readonly events: IngestionEventStream,
  ) {}

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
   * `Last-Event-ID`. A finished ingestion whose stream has expired answers its end from the row.
   * @throws AskError 400 for a malformed Last-Event-ID; 404 for an unknown ingestion.
   */
  @Get('ingestions/:ingestionId/events')
  @Sse()
  async stream(
    @Param('projectId', uuidParam('projectId')) projectId: string,
    @Param('ingestionId', uuidParam('ingestionId')) ingestionId: string,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Req() request: Request,
  ): Promise<Observable<SseMessage>> {
    if (lastEventId !== undefined && lastEventId !== '' && !IngestionEventStream.isStreamId(lastEventId)) {
      throw invalidRequest('Last-Event-ID: must be an event id of this stream (like 1718000000000-0) or absent');
    }
    const view = await this.ingestions.find(projectId, ingestionId);
    if (!view) throw notFound('ingestion not found');
    return new Observable<SseMessage>((subscriber) => {
      const controller = new AbortController();
      this.relays.add(controller);
      request.on('close', () => controller.abort());
      (async () => {
        // A finished run whose stream has expired (or was lost with Redis): its row says how it ended.
        if (
          (view.status === 'completed' || view.status === 'failed') &&
          (await this.events.length(ingestionId)) === 0
        ) {
          if (!lastEventId) {
            if (view.status === 'completed')
              subscriber.next({ id: '0-1', type: 'done', data: { status: 'completed', counts: view.counts } });
            else if (view.error) subscriber.next({ id: '0-1', type: 'error', data: view.error });
          }
          subscriber.complete();
          return;
        }
        for await (const event of this.events.read(ingestionId, {
          after: lastEventId || undefined,
          signal: controller.signal,
        })) {
          subscriber.next({ id: event.id, type: event.type, data: event.data });
        }
        subscriber.complete();
      })()
        .catch((err) => subscriber.error(err))
        .finally(() => this.relays.delete(controller));
      return () => controller.abort();
    });
  }
}
