import { DEFAULT_LOW_RELEVANCE, effectiveRetrieval } from '@ask/ask-contracts';
import { relevanceFloor, type RelevancePolicy } from '@ask/context-budget';
import type { Project } from '@ask/persistence';

/**
 * The relevance floor of the project's embedder under its retrieval method (`relevanceFloor`: the
 * threshold and cosine weight of the one relevance judgement, issue 33 item 2) with its `retrievalSettings.lowRelevance` (default `spare-room`), or undefined
 * when the embedder has no measured floor (every item then counts as relevant).
 */
export function relevancePolicy(
  project: Pick<Project, 'embeddingSettings' | 'retrievalSettings'>,
): RelevancePolicy | undefined {
  const { method } = effectiveRetrieval(project.retrievalSettings, {
    embeddingProvider: project.embeddingSettings?.provider,
  });
  const judged = relevanceFloor(project.embeddingSettings?.model, method);
  if (judged === undefined) return undefined;
  return { ...judged, below: project.retrievalSettings?.lowRelevance ?? DEFAULT_LOW_RELEVANCE };
}
