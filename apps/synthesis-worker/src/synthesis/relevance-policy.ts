import {
  DEFAULT_LOW_RELEVANCE,
  effectiveRetrieval,
  type RelevanceJudgement,
  relevanceJudgement,
  type RetrievedItem,
} from '@ask/ask-contracts';
import { relevanceFloor, type RelevancePolicy } from '@ask/context-budget';
import type { Project } from '@ask/persistence';

/**
 * The relevance floor of the project's embedder under its retrieval method (`relevanceFloor`: the
 * threshold and cosine weight of the one relevance judgement) with its `retrievalSettings.lowRelevance` (default `spare-room`), or undefined
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

/**
 * The relevance judgement of the retrieved items under the project's embedder and retrieval method
 * (ask-contracts `relevanceJudgement`: the rule `ask eval` and the planner's floor use), which the
 * local stand-in abstains on; undefined when no rule applies (the vector method alone, an embedder
 * without one: never abstain).
 */
export function standInRelevance(
  project: Pick<Project, 'embeddingSettings' | 'retrievalSettings'>,
  items: ReadonlyArray<Pick<RetrievedItem, 'score' | 'legs'>>,
): RelevanceJudgement | undefined {
  const { method } = effectiveRetrieval(project.retrievalSettings, {
    embeddingProvider: project.embeddingSettings?.provider,
  });
  return relevanceJudgement(items, project.embeddingSettings?.model, method);
}
