import { SingleBar, Presets } from 'cli-progress';
import type { Command } from 'commander';
import { IngestionService, type IngestionResult, loadDocuments, loadInsightsFile, type LoadDocumentsOptions, type SourceDocument } from '@ask/ingestion';
import { createEmbeddingProvider } from '@ask/llm-providers';
import { InsightsRepository, KnowledgeRepository } from '@ask/persistence';
import { withDatabase } from './db';

/**
 * Loads a folder of Markdown, text or JSONL documents into a project's knowledge base: chunked by
 * tokens with overlap, embedded in batches with the project's embedding provider, stored (a document
 * already stored is replaced, an unchanged one skipped). Shows a progress bar when `progress` is set;
 * `load` selects and names the files (`loadDocuments` options) and `title`, when given, replaces each
 * document's title. Returns what was done and the uris of the documents loaded.
 * @throws Error when the project does not exist or has no embedding provider.
 */
export async function ingestFolder(
  projectId: string,
  dir: string,
  options: { progress?: boolean; load?: LoadDocumentsOptions; title?: (doc: SourceDocument) => string } = {},
): Promise<IngestionResult & { uris: string[] }> {
  const retitle = options.title;
  const loaded = await loadDocuments(dir, options.load);
  const documents = retitle ? loaded.map((doc) => ({ ...doc, title: retitle(doc) })) : loaded;
  return withDatabase(async (ds, projects) => {
    const project = await projects.findById(projectId);
    if (!project) throw new Error(`project ${projectId} not found`);
    if (!project.embeddingSettings) throw new Error(`project ${projectId} has no embedding provider`);
    const embedder = createEmbeddingProvider(project.embeddingSettings, (await projects.getCredentials(projectId)) ?? {});
    const service = new IngestionService(new KnowledgeRepository(ds), new InsightsRepository(ds));
    const bar = options.progress
      ? new SingleBar({ format: 'ingest {bar} {value}/{total} documents | {chunks} chunks | {eta_formatted} left', hideCursor: true }, Presets.shades_classic)
      : undefined;
    bar?.start(documents.length, 0, { chunks: 0 });
    const started = Date.now();
    try {
      const result = await service.ingest(projectId, documents, embedder, {
        onProgress: (p) => bar?.update(p.done, { chunks: p.chunks }),
      });
      bar?.stop();
      console.log(
        `ingested ${dir}: ${result.sources} documents (${result.created} new, ${result.replaced} replaced, ` +
          `${result.skippedUnchanged} unchanged), ${result.chunks} chunks embedded in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      return { ...result, uris: documents.map((d) => d.uri) };
    } finally {
      bar?.stop();
    }
  });
}

/** `ask ingest` and `ask insights`. */
export function registerIngestCommands(program: Command): void {
  program
    .command('ingest')
    .description('load a folder of Markdown, text or JSONL documents into a project\'s knowledge base')
    .requiredOption('--project <id>', 'project id')
    .requiredOption('--docs <dir>', 'folder of .md, .txt or .jsonl documents')
    .action(async (flags: { project: string; docs: string }) => {
      await ingestFolder(flags.project, flags.docs, { progress: process.stdout.isTTY });
    });

  program
    .command('insights')
    .description('load insights and recommendations from a JSON file { insights: [...], recommendations: [...] }')
    .requiredOption('--project <id>', 'project id')
    .requiredOption('--file <path>', 'JSON file')
    .action(async (flags: { project: string; file: string }) => {
      const file = await loadInsightsFile(flags.file);
      await withDatabase(async (ds, projects) => {
        const project = await projects.findById(flags.project);
        if (!project?.embeddingSettings) throw new Error(`project ${flags.project} not found or without an embedding provider`);
        const embedder = createEmbeddingProvider(project.embeddingSettings, (await projects.getCredentials(flags.project)) ?? {});
        const service = new IngestionService(new KnowledgeRepository(ds), new InsightsRepository(ds));
        console.log(JSON.stringify(await service.ingestInsights(flags.project, file, embedder), null, 2));
      });
    });
}
