import { checkEmbeddingLanguage, detectLanguages, type EmbeddingProvider, mainLanguage } from '@ask/llm-providers';
import type { EmbeddingSpace, KnowledgeStore } from '../ports';

/** The embedding space of a provider: `provider/model` and its vector length. */
export function embeddingSpace(provider: EmbeddingProvider): EmbeddingSpace {
  return { model: `${provider.provider}/${provider.model}`, dimensions: provider.dimensions };
}

/**
 * The first stage of an upload, before any work: the project must store vectors of the provider's
 * space only, and `texts` (the documents' or items' texts) must be mostly in languages the model
 * covers. Then, before any chunk is written, a project without a detected language takes the texts'
 * main one for its full-text configuration (`applyTextSearchConfig`), so new chunks are indexed with it.
 * @returns the provider's embedding space.
 * @throws EmbeddingSpaceMismatchError when the project stores vectors of another model or length;
 *   AskError 400 `invalid_request` when the texts are mostly in languages the model does not cover.
 */
export async function admitUpload(
  knowledge: Pick<KnowledgeStore, 'checkEmbeddingSpace' | 'applyTextSearchConfig'>,
  projectId: string,
  provider: EmbeddingProvider,
  texts: string[],
): Promise<EmbeddingSpace> {
  const space = embeddingSpace(provider);
  await knowledge.checkEmbeddingSpace(projectId, space);
  const languages = detectLanguages(texts);
  checkEmbeddingLanguage(provider, texts, languages);
  await knowledge.applyTextSearchConfig(projectId, mainLanguage(languages));
  return space;
}
