import { Inject, Injectable } from '@nestjs/common';
import { type IngestionAccepted, type IngestionKind, JobName } from '@ask/ask-contracts';
import { embeddingNotConfigured, embeddingSpaceChanged, notFound } from '@ask/ask-errors';
import { ambientCredentialsAllowed, APP_CONFIG, type AppConfig } from '@ask/config';
import { checkEmbeddingLanguage, createEmbeddingProvider, egressPolicyFor } from '@ask/llm-providers';
import { type IngestionItem, IngestionsRepository, KnowledgeRepository, ProjectsRepository } from '@ask/persistence';
import { IngestionProducer } from './ingestion.producer';

/**
 * Accepts uploads and re-embeds: checks the project (404), its embedding provider (412, before
 * anything is stored) and, for an upload, that its stored vectors are of the provider's embedding
 * space (409 `embedding_space_changed` otherwise: re-embed first); stores the upload with its
 * `ingestions` row in one transaction, enqueues the job and answers with the ingestion id. The
 * gateway chunks and embeds nothing: the ingestion worker does.
 */
@Injectable()
export class KnowledgeService {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly knowledge: KnowledgeRepository,
    private readonly ingestions: IngestionsRepository,
    private readonly producer: IngestionProducer,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * @throws AskError 404 not_found, 412 embedding_not_configured (none set, or a missing embedding
   *   setting or credential), 409 embedding_space_changed (uploads only), 400
   *   invalid_request for knowledge mostly in languages the embedding model does not cover.
   */
  async accept(projectId: string, kind: IngestionKind, items: readonly IngestionItem[]): Promise<IngestionAccepted> {
    const project = await this.projects.findById(projectId);
    if (!project) throw notFound('project not found');
    if (!project.embeddingSettings) throw embeddingNotConfigured();
    const embedder = createEmbeddingProvider(
      project.embeddingSettings,
      (await this.projects.getCredentials(projectId)) ?? {},
      { egress: egressPolicyFor(this.config), ambientCredentials: ambientCredentialsAllowed(this.config, projectId) },
    );
    if (kind !== 'reembed') {
      const space = { model: `${embedder.provider}/${embedder.model}`, dimensions: embedder.dimensions };
      const others = await this.knowledge.spacesOtherThan(projectId, space);
      if (others.length > 0) throw embeddingSpaceChanged(others, space);
      // A bounded sample (the worker checks again): knowledge the model cannot embed is a 400 now.
      checkEmbeddingLanguage(
        embedder,
        items.map((i) => (i.kind === 'document' ? i.text : `${i.title}\n${i.text}`)),
      );
    }
    const ingestionId = await this.ingestions.create(projectId, kind, items);
    await this.producer.enqueue(kind === 'reembed' ? JobName.Reembed : JobName.Ingest, { ingestionId, projectId });
    const statusUrl = `/api/v1/projects/${projectId}/ingestions/${ingestionId}`;
    return { ingestionId, eventsUrl: `${statusUrl}/events`, statusUrl };
  }
}
