import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { embeddingNotConfigured, embeddingSpaceChanged, llmNotConfigured, notFound } from '@ask/ask-errors';
import { ambientCredentialsAllowed, APP_CONFIG, type AppConfig } from '@ask/config';
import { createEmbeddingProvider, egressPolicyFor } from '@ask/llm-providers';
import { AskEventStream } from '@ask/event-stream';
import { inSpan, SpanKind } from '@ask/observability';
import { AsksRepository, ProjectsRepository } from '@ask/persistence';
import { EventsTokenSigner } from '../auth/events-token';
import { AskRetrievalProducer } from './ask-retrieval.producer';
import type { AskAccepted, AskDto } from './ask.dto';

/**
 * Accepts an ask: checks the project and its providers (412 before anything is queued), resolves or
 * creates the session, records the ask in PostgreSQL (`asks`: the durable record the reconciler
 * checks Redis against), opens the ask's event stream with `accepted`, and enqueues retrieval.
 */
@Injectable()
export class AskService {
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly asks: AsksRepository,
    private readonly events: AskEventStream,
    private readonly producer: AskRetrievalProducer,
    private readonly tokens: EventsTokenSigner,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * @throws AskError 404 not_found (unknown project or a session of another project),
   *   412 embedding_not_configured / llm_not_configured, 409 embedding_space_changed (the project's
   *   stored vectors come from another embedding model: re-embed first).
   */
  accept(projectId: string, body: AskDto, keyId?: string): Promise<AskAccepted> {
    // The root span of the ask's trace (tracing on): its children are the accepted publish and the send.
    return inSpan(
      'ask accept',
      () => ({ kind: SpanKind.SERVER, attributes: { 'ask.project.id': projectId } }),
      (span) =>
        this.acceptAsk(projectId, body, keyId, (askId, sessionId) =>
          span?.setAttributes({ 'ask.id': askId, 'ask.session.id': sessionId }),
        ),
    );
  }

  private async acceptAsk(
    projectId: string,
    body: AskDto,
    keyId: string | undefined,
    identified: (askId: string, sessionId: string) => void,
  ): Promise<AskAccepted> {
    // The project, its credentials and its stored embedding spaces in one round trip.
    const found = await this.projects.findForAsk(projectId);
    if (!found) throw notFound('project not found');
    const { project, credentials, spaces } = found;
    if (!project.embeddingSettings) throw embeddingNotConfigured();
    if (!project.llmSettings) throw llmNotConfigured();
    const embedder = createEmbeddingProvider(project.embeddingSettings, credentials ?? {}, {
      egress: egressPolicyFor(this.config),
      ambientCredentials: ambientCredentialsAllowed(this.config, projectId),
    });
    const space = { model: `${embedder.provider}/${embedder.model}`, dimensions: embedder.dimensions };
    const others = spaces.filter((s) => s.model !== space.model || s.dimensions !== space.dimensions);
    if (others.length > 0) throw embeddingSpaceChanged(others, space);

    const askId = randomUUID();
    const acceptedAt = new Date();
    // Durable first: once Redis holds the ask, PostgreSQL knows it, so a Redis that loses it is caught.
    // One round trip with the session: its check (404 for a session of another project) or its creation.
    let sessionId = body.sessionId;
    if (sessionId) {
      if (!(await this.asks.recordInSession({ id: askId, projectId, sessionId, question: body.question, acceptedAt })))
        throw notFound('session not found');
    } else {
      sessionId = await this.asks.recordInNewSession(
        { id: askId, projectId, question: body.question, acceptedAt },
        titleFrom(body.question),
      );
    }
    identified(askId, sessionId);
    try {
      // The meta and the `accepted` event in one Redis round trip.
      await this.events.open(
        askId,
        { projectId, sessionId, acceptedAt: acceptedAt.toISOString(), ...(keyId ? { keyId } : {}) },
        { askId, sessionId },
      );
      await this.producer.enqueue({
        askId,
        projectId,
        sessionId,
        question: body.question,
        acceptedAt: acceptedAt.toISOString(),
      });
    } catch (err) {
      // Not accepted after all (the caller gets the error): the reconciler must not run it.
      await this.asks.finish(askId, 'error', 'not_accepted').catch(() => undefined);
      throw err;
    }
    return { askId, sessionId, eventsUrl: `/api/v1/asks/${askId}/events?token=${this.tokens.sign(askId)}` };
  }
}

/** A session's title: its first question, on one line, at most 80 characters. */
function titleFrom(question: string): string {
  const flat = question.replace(/\s+/g, ' ').trim();
  return flat.length <= 80 ? flat : `${flat.slice(0, 79)}…`;
}
