import { detectLanguage } from '@ask/llm-providers';
import type { KnowledgeStore } from '../ports';
import type { DocumentFailedHandler } from '../ingestion.service';
import type { SourceDocument } from '../load-documents';
import type { PendingDocument } from './embed-batches';
import type { IngestionTally } from './tally';

/**
 * The store stage of one embedded document: a failed one is reported (`onDocumentFailed`) and keeps
 * what was stored; a skipped one is counted unchanged; any other has its chunks replaced in one
 * transaction (`replaceSource`, with its detected language), `unchanged` when its hash was stored
 * meanwhile. Each is then counted in `tally` (which reports progress).
 */
export async function storeDocument(
  knowledge: Pick<KnowledgeStore, 'replaceSource'>,
  projectId: string,
  embeddingModel: string,
  entry: PendingDocument<SourceDocument>,
  tally: IngestionTally,
  onDocumentFailed?: DocumentFailedHandler,
): Promise<void> {
  const { doc } = entry;
  if (entry.failed) {
    await onDocumentFailed?.(doc.uri, entry.failed);
    return tally.finished(doc.uri, 'failed');
  }
  if (entry.skip) return tally.finished(doc.uri, 'unchanged');
  const stored = await knowledge.replaceSource(
    projectId,
    { uri: doc.uri, title: doc.title, contentHash: entry.hash, language: detectLanguage(doc.text) },
    entry.chunks.map((c, i) => ({
      text: c.text,
      tokenCount: c.tokenCount,
      section: c.section,
      embedding: entry.embeddings[i],
    })),
    embeddingModel,
  );
  if (stored.status === 'unchanged') return tally.finished(doc.uri, 'unchanged');
  return tally.finished(doc.uri, stored.status, stored.chunkCount);
}
