import { SingleBar, Presets } from 'cli-progress';
import type { Command } from 'commander';
import type { Writable } from 'node:stream';
import { AskApiError, AskClient } from '@ask/ask-client';
import type { ErrorEvent, IngestionCounts, IngestionEvent, IngestionFailure } from '@ask/ask-contracts';
import {
  IngestionService,
  type IngestionResult,
  loadDocuments,
  loadInsightsFile,
  type LoadDocumentsOptions,
  ReembedService,
  type SourceDocument,
} from '@ask/ingestion';
import { ambientCredentialsAllowed, appConfig } from '@ask/config';
import { createEmbeddingProvider, egressPolicyFor } from '@ask/llm-providers';
import { EmbeddingLedger, InsightsRepository, KnowledgeRepository, ProviderCallsRepository } from '@ask/persistence';
import type { DataSource } from 'typeorm';
import { withDatabase } from './db';
import { count } from './plural';

/** Documents per `POST …/knowledge` call (the API's limit is 200). */
const DOCUMENTS_PER_CALL = 200;
/** JSON characters per call, below the gateway's 8 MiB body limit. */
const CHARACTERS_PER_CALL = 6 * 1024 * 1024;

/** Where the progress bar draws: a TTY by default, any stream when `noTTYOutput` (tests). */
export interface ProgressOptions {
  progress?: boolean;
  stream?: Writable;
}

/** The ingestion progress bar: documents done of total, chunks stored, documents failed. */
export function progressBar(options: ProgressOptions): SingleBar | undefined {
  if (!options.progress) return undefined;
  return new SingleBar(
    {
      format: 'ingest {bar} {value}/{total} documents | {chunks} chunks | {failed} failed | {eta_formatted} left',
      hideCursor: true,
      ...(options.stream ? { stream: options.stream, noTTYOutput: true, notTTYSchedule: 0 } : {}),
    },
    Presets.shades_classic,
  );
}

/**
 * Loads a folder of Markdown, text or JSONL documents into a project's knowledge base in-process (the
 * offline path: the CLI writes the database directly with the same library the ingestion worker
 * runs): chunked by tokens with overlap, embedded in batches with the project's embedding provider,
 * stored (a document already stored is replaced, an unchanged one skipped). Shows a progress bar
 * when `progress` is set; `load` selects and names the files (`loadDocuments` options) and `prepare`,
 * when given, rewrites each loaded document (title, text) before it is chunked; `keep`, when given, selects the loaded documents to ingest. Returns what was done and the uris of the documents ingested.
 * @throws Error when the project does not exist or has no embedding provider; AskError for a
 *   provider failure that stops the run.
 */
export async function ingestFolder(
  projectId: string,
  dir: string,
  options: ProgressOptions & {
    load?: LoadDocumentsOptions;
    prepare?: (doc: SourceDocument) => SourceDocument;
    keep?: (doc: SourceDocument) => boolean;
  } = {},
): Promise<IngestionResult & { uris: string[] }> {
  const loaded = (await loadDocuments(dir, options.load)).filter((doc) => options.keep?.(doc) ?? true);
  const documents = options.prepare ? loaded.map(options.prepare) : loaded;
  return withDatabase(async (ds, projects) => {
    const project = await projects.findById(projectId);
    if (!project) throw new Error(`project ${projectId} not found`);
    if (!project.embeddingSettings) throw new Error(`project ${projectId} has no embedding provider`);
    const config = appConfig();
    const embedder = createEmbeddingProvider(
      project.embeddingSettings,
      (await projects.getCredentials(projectId)) ?? {},
      {
        egress: egressPolicyFor(config),
        embeddingThreads: config.INGESTION_EMBEDDING_THREADS,
        ambientCredentials: ambientCredentialsAllowed(config, projectId),
      },
    );
    const service = new IngestionService(new KnowledgeRepository(ds), new InsightsRepository(ds));
    const bar = progressBar(options);
    bar?.start(documents.length, 0, { chunks: 0, failed: 0 });
    const started = Date.now();
    const failures: string[] = [];
    try {
      const result = await service.ingest(projectId, documents, embedder, {
        calls: ledgerFor(ds, projectId),
        onProgress: (p) => bar?.update(p.done, { chunks: p.chunks, failed: p.failed ?? 0 }),
        onDocumentFailed: (uri, error) => void failures.push(`${uri}: ${error.code} ${error.details ?? error.error}`),
      });
      bar?.stop();
      console.log(
        `ingested ${dir}: ${count(result.sources, 'document')} (${result.created} new, ${result.replaced} replaced, ` +
          `${result.skippedUnchanged} unchanged, ${result.failed} failed), ${count(result.chunks, 'chunk')} embedded in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      for (const line of failures) console.log(`  failed ${line}`);
      return { ...result, uris: documents.map((d) => d.uri) };
    } finally {
      bar?.stop();
    }
  });
}

/** Every embedding call of an offline ingestion is a provider_calls row of the project, as in the worker. */
function ledgerFor(ds: DataSource, projectId: string) {
  return {
    ledger: new EmbeddingLedger(new ProviderCallsRepository(ds), appConfig().ASK_PRICE_OVERRIDES),
    scope: { projectId },
  };
}

/** What {@link ingestViaGateway} did over all its calls. */
export interface GatewayIngestion {
  ingestionIds: string[];
  counts: IngestionCounts;
  failures: IngestionFailure[];
  /** Every event received, per ingestion, in order. */
  events: IngestionEvent[][];
}

/** Splits documents into calls of at most 200 documents and ~6 MiB of JSON. */
export function splitIntoCalls(documents: readonly SourceDocument[]): SourceDocument[][] {
  const calls: SourceDocument[][] = [];
  let current: SourceDocument[] = [];
  let size = 0;
  for (const doc of documents) {
    const docSize = doc.text.length + doc.uri.length + doc.title.length + 64;
    if (current.length > 0 && (current.length >= DOCUMENTS_PER_CALL || size + docSize > CHARACTERS_PER_CALL)) {
      calls.push(current);
      current = [];
      size = 0;
    }
    current.push(doc);
    size += docSize;
  }
  if (current.length > 0) calls.push(current);
  return calls;
}

/**
 * Loads `documents` through the gateway: `POST …/knowledge` per call of at most 200 documents (202),
 * then follows each ingestion's SSE progress stream to `done`, feeding the progress bar from its
 * `progress` events (documents done over every call, chunks, failures).
 * @throws AskApiError for a refused call (404, 409 `embedding_space_changed`, 412, 429…); Error with
 *   the typed code when an ingestion ends with `error`.
 */
export async function ingestViaGateway(
  client: AskClient,
  projectId: string,
  documents: readonly SourceDocument[],
  options: ProgressOptions = {},
): Promise<GatewayIngestion> {
  const bar = progressBar(options);
  const total: IngestionCounts = {
    total: documents.length,
    done: 0,
    created: 0,
    replaced: 0,
    unchanged: 0,
    failed: 0,
    chunks: 0,
  };
  const out: GatewayIngestion = { ingestionIds: [], counts: total, failures: [], events: [] };
  bar?.start(documents.length, 0, { chunks: 0, failed: 0 });
  try {
    for (const call of splitIntoCalls(documents)) {
      const accepted = await client.ingestKnowledge(
        projectId,
        call.map((d) => ({ uri: d.uri, title: d.title, text: d.text })),
      );
      out.ingestionIds.push(accepted.ingestionId);
      const base = { ...total };
      const followed = await client.followIngestion(projectId, accepted.ingestionId, {
        onEvent: (event) => {
          if (event.type === 'progress' || event.type === 'done') {
            const c = (event.data as { counts: IngestionCounts }).counts;
            bar?.update(base.done + c.done, { chunks: base.chunks + c.chunks, failed: base.failed + c.failed });
          }
        },
      });
      out.events.push(followed.events);
      out.failures.push(
        ...followed.events.filter((e) => e.type === 'document_failed').map((e) => e.data as IngestionFailure),
      );
      if (followed.error) throw new IngestionFailedError(accepted.ingestionId, followed.error);
      const c = followed.done!.counts;
      for (const key of ['done', 'created', 'replaced', 'unchanged', 'failed', 'chunks'] as const)
        total[key] = base[key] + c[key];
    }
    return out;
  } finally {
    bar?.stop();
  }
}

/** An ingestion that ended with a typed `error` event. */
export class IngestionFailedError extends Error {
  constructor(
    readonly ingestionId: string,
    readonly error: ErrorEvent,
  ) {
    super(
      `ingestion ${ingestionId} failed: ${error.status} ${error.code}: ${error.error}${error.details ? ` (${error.details})` : ''}`,
    );
    this.name = 'IngestionFailedError';
  }
}

/**
 * Re-embeds a project (every vector stored by another embedding model, rebuilt from the stored
 * text with the current one): through the gateway (`POST …/reembed` + its progress stream) when a
 * client is given, else in-process on the database.
 */
export async function reembedProject(
  projectId: string,
  client: AskClient | undefined,
  options: ProgressOptions = {},
): Promise<IngestionCounts> {
  const bar = progressBar(options);
  try {
    if (client) {
      const accepted = await client.reembed(projectId);
      let started = false;
      const followed = await client.followIngestion(projectId, accepted.ingestionId, {
        onEvent: (event) => {
          if (event.type === 'started') {
            started = true;
            bar?.start((event.data as { counts: IngestionCounts }).counts.total, 0, { chunks: 0, failed: 0 });
          }
          if (started && (event.type === 'progress' || event.type === 'done')) {
            const c = (event.data as { counts: IngestionCounts }).counts;
            bar?.update(c.done, { chunks: c.chunks, failed: c.failed });
          }
        },
      });
      if (followed.error) throw new IngestionFailedError(accepted.ingestionId, followed.error);
      return followed.done!.counts;
    }
    return await withDatabase(async (ds, projects) => {
      const project = await projects.findById(projectId);
      if (!project?.embeddingSettings)
        throw new Error(`project ${projectId} not found or without an embedding provider`);
      const embedder = createEmbeddingProvider(
        project.embeddingSettings,
        (await projects.getCredentials(projectId)) ?? {},
        {
          egress: egressPolicyFor(appConfig()),
          ambientCredentials: ambientCredentialsAllowed(appConfig(), projectId),
        },
      );
      const service = new ReembedService(new KnowledgeRepository(ds), new InsightsRepository(ds));
      bar?.start(await service.pending(projectId, embedder), 0, { chunks: 0, failed: 0 });
      const result = await service.reembed(projectId, embedder, {
        onProgress: (p) => bar?.update(p.done, { chunks: p.chunks, failed: p.failed ?? 0 }),
      });
      return {
        total: result.total,
        done: result.reembedded + result.superseded + result.failed,
        created: result.reembedded,
        replaced: 0,
        unchanged: result.superseded,
        failed: result.failed,
        chunks: result.vectors,
      };
    });
  } finally {
    bar?.stop();
  }
}

/** `ask ingest`, `ask insights` and `ask reembed`. */
export function registerIngestCommands(program: Command): void {
  program
    .command('ingest')
    .description("load a folder of Markdown, text or JSONL documents into a project's knowledge base")
    .requiredOption('--project <id>', 'project id')
    .requiredOption('--docs <dir>', 'folder of .md, .txt or .jsonl documents')
    .option(
      '--gateway <url>',
      'load through the gateway (queued ingestion, progress from its event stream) instead of writing the database directly',
    )
    .option('--api-key <key>', 'project API key for --gateway (Authorization: Bearer)')
    .option('--progress', 'draw the progress bar on stderr even when it is not a terminal (one line per update)')
    .action(async (flags: { project: string; docs: string; gateway?: string; apiKey?: string; progress?: boolean }) => {
      const progress: ProgressOptions = flags.progress
        ? { progress: true, stream: process.stderr }
        : { progress: process.stdout.isTTY };
      if (!flags.gateway) {
        await ingestFolder(flags.project, flags.docs, progress);
        return;
      }
      const started = Date.now();
      const result = await ingestViaGateway(
        new AskClient(flags.gateway, flags.apiKey),
        flags.project,
        await loadDocuments(flags.docs),
        progress,
      ).catch((err: unknown) => {
        throw err instanceof AskApiError ? new Error(err.message) : err;
      });
      const c = result.counts;
      console.log(
        `ingested ${flags.docs} through ${flags.gateway} (${count(result.ingestionIds.length, 'ingestion')}): ${count(c.total, 'document')} ` +
          `(${c.created} new, ${c.replaced} replaced, ${c.unchanged} unchanged, ${c.failed} failed), ${count(c.chunks, 'chunk')} in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      for (const f of result.failures)
        console.log(`  failed ${f.uri}: ${f.error.code} ${f.error.details ?? f.error.error}`);
    });

  program
    .command('reembed')
    .description("rebuild a project's vectors with its current embedding model from the stored text")
    .requiredOption('--project <id>', 'project id')
    .option('--gateway <url>', 'run it as a queued job through the gateway instead of in-process')
    .option('--api-key <key>', 'project API key for --gateway (Authorization: Bearer)')
    .option('--progress', 'draw the progress bar on stderr even when it is not a terminal')
    .action(async (flags: { project: string; gateway?: string; apiKey?: string; progress?: boolean }) => {
      const client = flags.gateway ? new AskClient(flags.gateway, flags.apiKey) : undefined;
      const c = await reembedProject(
        flags.project,
        client,
        flags.progress ? { progress: true, stream: process.stderr } : { progress: process.stdout.isTTY },
      );
      console.log(
        `re-embedded ${c.created} of ${c.total} sources and items (${c.unchanged} superseded, ${c.failed} failed), ${c.chunks} vectors`,
      );
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
        if (!project?.embeddingSettings)
          throw new Error(`project ${flags.project} not found or without an embedding provider`);
        const embedder = createEmbeddingProvider(
          project.embeddingSettings,
          (await projects.getCredentials(flags.project)) ?? {},
          {
            egress: egressPolicyFor(appConfig()),
            ambientCredentials: ambientCredentialsAllowed(appConfig(), flags.project),
          },
        );
        const service = new IngestionService(new KnowledgeRepository(ds), new InsightsRepository(ds));
        const result = await service.ingestInsights(flags.project, file, embedder, {
          calls: ledgerFor(ds, flags.project),
        });
        console.log(JSON.stringify(result, null, 2));
      });
    });
}
