import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { effectiveRetrieval, type RetrievalMethod, type RetrieveJobData, type RetrievedItem } from '@ask/ask-contracts';
import { embeddingNotConfigured, embeddingSpaceChanged, isAskError, toErrorEvent } from '@ask/ask-errors';
import { ambientCredentialsAllowed, APP_CONFIG, type AppConfig } from '@ask/config';
import { AskEventStream, replayStoredAnswer } from '@ask/event-stream';
import {
  checkEmbeddings,
  classifyEmbeddingFailure,
  createEmbeddingProvider,
  egressPolicyFor,
} from '@ask/llm-providers';
import { inSpan } from '@ask/observability';
import {
  CallNotRecordedError,
  EmbeddingLedger,
  NO_CALL_RECORDS,
  ProjectsRepository,
  ProviderCallsRepository,
  RetrievalRepository,
  SessionsRepository,
} from '@ask/persistence';
import { AskSynthesisProducer } from './ask-synthesis.producer';

/** How many of the best items the `retrieved` event lists. */
const TOP_IN_EVENT = 5;

/**
 * Embeds the question with the project's embedding provider, ranks the project's insights,
 * recommendations and knowledge chunks by cosine distance (pgvector, top-K from the project's
 * settings), emits `retrieved` and hands the ranked items to synthesis.
 *
 * An ask whose answer is already stored (a re-enqueued or retried job of a finished ask) is never
 * embedded again: it ends from the stored answer (`reset`, the answer, `done`), no provider called.
 */
@Injectable()
export class RetrievalService {
  private readonly logger = new Logger(RetrievalService.name);
  /** Records the question's embedding call in `provider_calls` (no ledger without the repository: specs). */
  private readonly ledger: EmbeddingLedger;

  constructor(
    private readonly projects: ProjectsRepository,
    private readonly retrieval: RetrievalRepository,
    private readonly events: AskEventStream,
    private readonly synthesis: AskSynthesisProducer,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sessions: SessionsRepository,
    @Optional() calls?: ProviderCallsRepository,
  ) {
    this.ledger = new EmbeddingLedger(calls ?? NO_CALL_RECORDS, config.ASK_PRICE_OVERRIDES);
  }

  /**
   * Runs one retrieval. A typed failure (no embedding provider, provider rejects) ends the ask with an
   * `error` event; an infrastructure failure is thrown so BullMQ retries the job. An ask already
   * answered ends from its stored answer before any provider call.
   * @throws FencedPublishError when the ask's stream already ended (nothing to do).
   */
  async retrieve(data: RetrieveJobData): Promise<void> {
    let items: RetrievedItem[];
    let method: RetrievalMethod;
    // The embedding call's row is written while the ask goes on; awaited before the job ends.
    const recorded: Array<Promise<void>> = [];
    // The project and the ask's stored answer (if any) in parallel: no added wait per ask.
    const [found, stored] = await Promise.all([
      this.projects.findForAsk(data.projectId),
      this.sessions.findByAsk(data.projectId, data.askId),
    ]);
    if (stored) {
      await replayStoredAnswer(this.events, data.askId, stored);
      return;
    }
    try {
      ({ items, method } = await this.rank(data, found, recorded));
    } catch (err) {
      await Promise.all(recorded);
      if (!isAskError(err)) throw err;
      await this.events.publish(data.askId, 'error', toErrorEvent(err));
      return;
    }
    await this.events.publish(data.askId, 'retrieved', {
      counts: {
        insight: items.filter((i) => i.kind === 'insight').length,
        recommendation: items.filter((i) => i.kind === 'recommendation').length,
        knowledge: items.filter((i) => i.kind === 'knowledge').length,
      },
      top: items.slice(0, TOP_IN_EVENT).map(({ kind, id, title, score, source, legs }) => ({
        kind,
        id,
        title,
        score: round(score),
        ...(source !== undefined ? { source } : {}),
        ...(legs !== undefined ? { legs } : {}),
      })),
      method,
    });
    await this.synthesis.enqueue({ ...data, items });
    await Promise.all(recorded);
  }

  /**
   * The project's top-K items for the question by its retrieval method: the vector leg (pgvector
   * cosine), the full-text leg (PostgreSQL `tsvector`), or both fused by weighted reciprocal rank
   * (`RetrievalRepository.searchHybrid`). The question is embedded for every method, so each item carries its cosine
   * similarity as `score`.
   */
  private async rank(
    data: RetrieveJobData,
    found: Awaited<ReturnType<ProjectsRepository['findForAsk']>>,
    recorded: Array<Promise<void>>,
  ): Promise<{ items: RetrievedItem[]; method: RetrievalMethod }> {
    // `found`: the project, its credentials and its stored embedding spaces (one round trip).
    const project = found?.project;
    if (!project?.embeddingSettings) throw embeddingNotConfigured();
    const credentials = found?.credentials;
    const embedder = createEmbeddingProvider(project.embeddingSettings, credentials ?? {}, {
      egress: egressPolicyFor(this.config),
      ambientCredentials: ambientCredentialsAllowed(this.config, data.projectId),
    });
    const space = { model: `${embedder.provider}/${embedder.model}`, dimensions: embedder.dimensions };
    // Vectors of another model are never ranked against this question (the search filters on the
    // model too); a project whose model changed is told to re-embed instead of getting nothing.
    const others = (found?.spaces ?? []).filter((s) => s.model !== space.model || s.dimensions !== space.dimensions);
    if (others.length > 0) throw embeddingSpaceChanged(others, space);
    let vector: number[];
    try {
      const scope = { projectId: data.projectId, sessionId: data.sessionId, askId: data.askId };
      const vectors = await this.ledger.embed(embedder, [data.question], scope, { writes: recorded });
      [vector] = checkEmbeddings(space.model, 1, embedder.dimensions, vectors);
    } catch (err) {
      // No row, no call: retried as an infrastructure failure (BullMQ), not a provider's error.
      if (err instanceof CallNotRecordedError) throw err;
      const failure = classifyEmbeddingFailure(err, project.embeddingSettings.provider);
      this.logger.warn(`ask ${data.askId}: embedding failed (${failure.error.code})`);
      throw failure.error;
    }
    // Weights default per embedder; the full-text leg queries with the configuration in force.
    const settings = effectiveRetrieval(project.retrievalSettings, {
      embeddingProvider: project.embeddingSettings.provider,
      textSearchConfig: project.textSearchConfig,
    });
    return inSpan(
      'retrieval.search',
      () => ({ attributes: { 'ask.retrieval.method': settings.method, 'ask.retrieval.top_k': project.topK } }),
      async (span) => {
        const ranked = await this.search(data, vector, project.topK, space.model, settings);
        span?.setAttribute('ask.retrieval.items', ranked.items.length);
        return ranked;
      },
    );
  }

  /** The project's top-K items by its retrieval method (see {@link rank}). */
  private async search(
    data: RetrieveJobData,
    vector: number[],
    topK: number,
    model: string,
    settings: ReturnType<typeof effectiveRetrieval>,
  ): Promise<{ items: RetrievedItem[]; method: RetrievalMethod }> {
    const { method } = settings;
    if (method === 'vector') return { method, items: await this.retrieval.search(data.projectId, vector, topK, model) };
    if (method === 'fulltext') {
      return {
        method,
        items: await this.retrieval.searchFullText(data.projectId, data.question, vector, topK, model),
      };
    }
    const weights = { vector: settings.vectorWeight, fulltext: settings.fulltextWeight };
    return {
      method,
      items: await this.retrieval.searchHybrid(data.projectId, data.question, vector, topK, model, weights),
    };
  }
}

function round(score: number): number {
  return Math.round(score * 10_000) / 10_000;
}
