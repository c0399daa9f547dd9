import { Body, Controller, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import { embeddingNotConfigured, invalidRequest, notFound } from '@ask/ask-errors';
import { IngestionService, type IngestionResult, type InsightsIngestionResult } from '@ask/ingestion';
import { createEmbeddingProvider, type EmbeddingProvider } from '@ask/llm-providers';
import { EmbeddingSpaceMismatchError, ProjectsRepository } from '@ask/persistence';
import { uuidParam } from '../errors/params';
import { RateLimit } from '../rate-limit/rate-limit';
import { IngestInsightsDto, IngestKnowledgeDto } from './knowledge.dto';

/**
 * Loads documents, insights and recommendations into a project (chunked by tokens with overlap,
 * embedded in batches with the project's embedding provider). Re-sending a document (same `uri`)
 * replaces its chunks; an unchanged one is skipped.
 */
@Controller('api/v1/projects/:projectId')
export class KnowledgeController {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly ingestion: IngestionService,
  ) {}

  /** `POST /api/v1/projects/:projectId/knowledge` → 200 the ingestion counts. @throws AskError 404, 412, 400. */
  @Post('knowledge')
  @HttpCode(HttpStatus.OK)
  @RateLimit('ingest')
  async ingestKnowledge(
    @Param('projectId', uuidParam('projectId')) projectId: string,
    @Body() body: IngestKnowledgeDto,
  ): Promise<IngestionResult> {
    const embedder = await this.embedder(projectId);
    const documents = body.documents.map((d) => ({ uri: d.uri, title: d.title ?? d.uri, text: d.text }));
    return this.guard(() => this.ingestion.ingest(projectId, documents, embedder));
  }

  /** `POST /api/v1/projects/:projectId/insights` → 200 counts per kind. @throws AskError 404, 412, 400. */
  @Post('insights')
  @HttpCode(HttpStatus.OK)
  @RateLimit('ingest')
  async ingestInsights(
    @Param('projectId', uuidParam('projectId')) projectId: string,
    @Body() body: IngestInsightsDto,
  ): Promise<InsightsIngestionResult> {
    const embedder = await this.embedder(projectId);
    return this.guard(() =>
      this.ingestion.ingestInsights(
        projectId,
        { insights: body.insights ?? [], recommendations: body.recommendations ?? [] },
        embedder,
      ),
    );
  }

  private async embedder(projectId: string): Promise<EmbeddingProvider> {
    const project = await this.projects.findById(projectId);
    if (!project) throw notFound('project not found');
    if (!project.embeddingSettings) throw embeddingNotConfigured();
    return createEmbeddingProvider(project.embeddingSettings, (await this.projects.getCredentials(projectId)) ?? {});
  }

  /** A project whose stored vectors come from another embedding model is refused, never mixed. */
  private async guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (err instanceof EmbeddingSpaceMismatchError) throw invalidRequest(err.message);
      throw err;
    }
  }
}
