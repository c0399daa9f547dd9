import type {
  ErrorEvent,
  IngestionCounts,
  IngestionEventMap,
  IngestionEventType,
  IngestionFailure,
  IngestionView,
} from '@ask/ask-contracts';
import {
  type AskError,
  embeddingNotConfigured,
  embeddingSpaceChanged,
  isAskError,
  notFound,
  toErrorEvent,
} from '@ask/ask-errors';
import { createEmbeddingProvider, egressPolicyFor, type EmbeddingProvider } from '@ask/llm-providers';
import { ambientCredentialsAllowed, APP_CONFIG, type AppConfig } from '@ask/config';
import { Inject, Injectable, Optional } from '@nestjs/common';
import type { EmbedRetryOptions } from './embed-with-retry';
import { embeddingSpace, IngestionService, type IngestionProgress } from './ingestion.service';
import {
  EMBEDDING_CALL_LEDGER,
  type EmbeddingCallLedger,
  INGESTIONS_STORE,
  type IngestionsStore,
  isEmbeddingSpaceMismatch,
  KNOWLEDGE_STORE,
  type KnowledgeStore,
  PROJECTS_STORE,
  type ProjectsStore,
} from './ports';
import { ReembedService } from './reembed.service';

/** Counts of an ingestion with nothing done yet. */
function emptyCounts(total: number): IngestionCounts {
  return { total, done: 0, created: 0, replaced: 0, unchanged: 0, failed: 0, chunks: 0 };
}

/** Where a run's events go: the ingestion's Redis stream in the worker, a progress bar in the CLI. */
export type IngestionEventSink = <T extends IngestionEventType>(type: T, data: IngestionEventMap[T]) => unknown;

/** Options of {@link IngestionRunner.run}. */
export interface RunOptions extends EmbedRetryOptions {
  /** This job attempt, from 1 (BullMQ `attemptsMade + 1`). */
  attempt?: number;
  /** Worker threads of the embedded semantic embedder (`local-semantic`); other providers ignore it. Default 1. */
  embeddingThreads?: number;
}

/** How a run ended: `skipped` when the ingestion was unknown or had already ended (a repeated job). */
export type RunOutcome = 'completed' | 'failed' | 'skipped';

/**
 * Runs one stored ingestion (`ingestions` row + its `ingestion_documents`) to its end: checks the
 * project (404), its embedding provider (412) and its embedding space (409
 * `embedding_space_changed` when vectors of another model are stored: re-embed first), then ingests
 * the documents or items, or re-embeds the project, recording progress in the row and sending each
 * event to the sink: `started`, `progress` after each document, `document_failed`, then `done` or
 * `error`. The same code serves the ingestion worker and the in-process CLI.
 *
 * A typed failure (AskError) ends the run `failed` with its error. Anything else (a database or
 * Redis fault) is thrown so the job is retried; the caller ends the run with {@link fail} on the
 * last attempt.
 */
@Injectable()
export class IngestionRunner {
  constructor(
    @Inject(INGESTIONS_STORE) private readonly ingestions: IngestionsStore,
    @Inject(PROJECTS_STORE) private readonly projects: ProjectsStore,
    @Inject(KNOWLEDGE_STORE) private readonly knowledge: KnowledgeStore,
    private readonly service: IngestionService,
    private readonly reembedder: ReembedService,
    /** Records each embedding call of a run in `provider_calls` (none without it). */
    @Optional() @Inject(EMBEDDING_CALL_LEDGER) private readonly ledger?: EmbeddingCallLedger,
    @Optional() @Inject(APP_CONFIG) private readonly config?: AppConfig,
  ) {}

  /** Runs the ingestion (see the class). @throws non-typed errors (infrastructure) for a retry. */
  async run(
    projectId: string,
    ingestionId: string,
    sink: IngestionEventSink,
    options: RunOptions = {},
  ): Promise<RunOutcome> {
    const view = await this.ingestions.find(projectId, ingestionId);
    if (!view || view.status === 'completed' || view.status === 'failed') return 'skipped';
    const failures: IngestionFailure[] = [];
    let counts: IngestionCounts = {
      ...view.counts,
      done: 0,
      created: 0,
      replaced: 0,
      unchanged: 0,
      failed: 0,
      chunks: 0,
    };
    try {
      const embedder = await this.embedder(projectId, options.embeddingThreads);
      const space = embeddingSpace(embedder);
      if (view.kind !== 'reembed') {
        const others = await this.knowledge.spacesOtherThan(projectId, space);
        if (others.length > 0) throw embeddingSpaceChanged(others, space);
      } else {
        counts = emptyCounts(await this.reembedder.pending(projectId, embedder));
      }
      const attempt = await this.ingestions.start(ingestionId, counts, space);
      await sink('started', { ingestionId, kind: view.kind, attempt: options.attempt ?? attempt, counts });

      const onProgress = async (p: IngestionProgress) => {
        counts = {
          total: counts.total,
          done: p.done,
          created: p.created ?? counts.created,
          replaced: p.replaced ?? counts.replaced,
          unchanged: p.unchanged ?? counts.unchanged,
          failed: p.failed ?? counts.failed,
          chunks: p.chunks,
        };
        await this.ingestions.progress(ingestionId, counts, failures);
        await sink('progress', { counts, ...(p.uri ? { uri: p.uri } : {}) });
      };
      const onDocumentFailed = async (uri: string, error: AskError) => {
        const failure = { uri, error: toErrorEvent(error) };
        failures.push(failure);
        await sink('document_failed', failure);
      };
      // Every embedding call of the run is a provider_calls row of the project (no ask, no session).
      const calls = this.ledger ? { ledger: this.ledger, scope: { projectId } } : undefined;
      const runOptions = { ...options, calls, onProgress, onDocumentFailed };
      await this.load(view, projectId, embedder, runOptions);
      await this.ingestions.finish(ingestionId, 'completed', counts, failures);
      await sink('done', { status: 'completed', counts });
      return 'completed';
    } catch (thrown) {
      // A model switch that raced the checks above is refused by the store itself: the same 409.
      const err = isEmbeddingSpaceMismatch(thrown) ? embeddingSpaceChanged(thrown.stored, thrown.incoming) : thrown;
      if (!isAskError(err)) throw err;
      await this.fail(ingestionId, err, counts, failures, sink);
      return 'failed';
    }
  }

  /**
   * Ends the run `failed` with `error` (typed; anything else becomes 500 internal_error) and sends
   * `error`. With `counts` null, the counts and failures recorded so far are kept.
   */
  async fail(
    ingestionId: string,
    error: unknown,
    counts: IngestionCounts | null,
    failures: readonly IngestionFailure[],
    sink: IngestionEventSink,
  ): Promise<void> {
    const event: ErrorEvent = toErrorEvent(error);
    const stored = counts === null ? await this.ingestions.findById(ingestionId) : null;
    const current = counts ?? stored?.counts ?? emptyCounts(0);
    await this.ingestions.finish(
      ingestionId,
      'failed',
      current,
      counts === null ? (stored?.failures ?? []) : failures,
      event,
    );
    await sink('error', event);
  }

  private async load(
    view: IngestionView,
    projectId: string,
    embedder: EmbeddingProvider,
    options: Parameters<IngestionService['ingest']>[3],
  ): Promise<void> {
    if (view.kind === 'reembed') {
      await this.reembedder.reembed(projectId, embedder, options);
      return;
    }
    const items = await this.ingestions.items(view.ingestionId);
    if (view.kind === 'knowledge') {
      await this.service.ingest(
        projectId,
        items.map((i) => ({ uri: i.uri, title: i.title, text: i.text })),
        embedder,
        options,
      );
      return;
    }
    await this.service.ingestInsights(
      projectId,
      {
        insights: items
          .filter((i) => i.kind === 'insight')
          .map((i) => ({ id: i.uri, name: i.title, description: i.text })),
        recommendations: items
          .filter((i) => i.kind === 'recommendation')
          .map((i) => ({ id: i.uri, title: i.title, body: i.text })),
      },
      embedder,
      options,
    );
  }

  /** @throws AskError 404 (project gone), 412 (no embedding provider, or a setting missing). */
  private async embedder(projectId: string, embeddingThreads?: number): Promise<EmbeddingProvider> {
    const project = await this.projects.findById(projectId);
    if (!project) throw notFound('project not found');
    if (!project.embeddingSettings) throw embeddingNotConfigured();
    return createEmbeddingProvider(project.embeddingSettings, (await this.projects.getCredentials(projectId)) ?? {}, {
      embeddingThreads,
      // The operator's allow-list; without a config (a spec's module), the strict policy.
      ...(this.config ? { egress: egressPolicyFor(this.config) } : {}),
      ambientCredentials: this.config ? ambientCredentialsAllowed(this.config, projectId) : false,
    });
  }
}
