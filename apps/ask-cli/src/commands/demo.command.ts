import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { DataSource } from 'typeorm';
import { AskClient } from '@ask/ask-client';
import { effectiveRetrieval, type RetrievalSettings } from '@ask/ask-contracts';
import { loadConfig } from '@ask/config';
import type { SourceDocument } from '@ask/ingestion';
import {
  ApiKeysRepository,
  ensureDatabase,
  KnowledgeRepository,
  type ProjectsRepository,
  runMigrations,
} from '@ask/persistence';
import { startStack } from '@ask/stack';
import { withDatabase } from './db';
import { ingestFolder } from './ingest.command';
import { toSettings } from './project.command';
import { readQuestions, runSession } from './session.command';
import { count } from './plural';

const ROOT = resolve(__dirname, '..', '..', '..', '..');
/**
 * The PostgreSQL 15 manual, when the shared data folder is `$ASK_SHARED_DATA` (as for the benches) or
 * sits beside the repo (`../shared/data`).
 */
export const POSTGRES_MANUAL = resolve(
  process.env['ASK_SHARED_DATA'] || resolve(ROOT, '..', 'shared', 'data'),
  'kb-postgresql-15-docs',
);
/**
 * The fallback corpus that exists on any machine after `npm ci`: the README of each of these installed
 * packages, the libraries this service is built on. Each is stored under its package name, so
 * `@nestjs/bullmq` and `bullmq` stay two sources.
 */
export const FALLBACK_PACKAGES = [
  'bullmq',
  '@nestjs/bullmq',
  'ioredis',
  'pg',
  'pgvector',
  'typeorm',
  'class-validator',
  'class-transformer',
  'commander',
  'zod',
  'js-tiktoken',
  'prom-client',
  '@nestjs/throttler',
  'eventsource-parser',
];

/**
 * Files of a package folder that are not its documentation: licences, security policies, change logs
 * and codes of conduct (matched on the file name, any case, any extension). Nested `node_modules`
 * (another package's copy, such as a second tslib) are skipped by `loadDocuments` itself.
 */
export const NOT_DOCUMENTATION =
  /(?:^|\/)(?:licen[cs]e|security|change(?:log|s)|history|code_of_conduct|contributing|authors)(?:[-_.][^/]*)?$/i;

/**
 * A package README as readable Markdown: HTML tags (logo tables, badges, `<picture>`) removed with
 * their text kept, Markdown images dropped, links kept as their text, and the blank lines left behind
 * collapsed. READMEs open with kilobytes of sponsor logos and badges that would otherwise fill whole
 * chunks and crowd real passages out of retrieval. Linear in the text's length.
 */
export function readableReadme(text: string): string {
  // Fenced code is kept as it is (`Promise<boolean>` is not a tag); only the prose between is cleaned.
  const parts = text.split(/^([ \t]*```.*)$/m);
  let inCode = false;
  const out = parts.map((part, i) => {
    if (i % 2 === 1) {
      inCode = !inCode;
      return part;
    }
    if (inCode) return part;
    return part
      .replace(/<!--[\s\S]*?-->/g, '')
      .replace(HTML_TAG, '')
      .replace(/!\[[^\]\n]*\]\([^)\n]*\)/g, '')
      .replace(/\[([^\]\n]*)\]\([^)\n]*\)/g, '$1')
      .replace(/^\[[^\]\n]+\]:[ \t]*\S+.*$/gm, '')
      .replace(/^[ \t]+$/gm, '')
      .replace(/\n{3,}/g, '\n\n');
  });
  return out.join('').trim();
}

/**
 * `text` without its licence sections: each Markdown heading named License / Licence (any level,
 * optionally with words after it, like "License and copyright") and everything up to the next
 * heading of the same or a higher level. A README's licence text answers no question about the
 * package and once filled a demo answer ("Permission is hereby granted…"). Headings inside fenced
 * code are not headings. Linear in the text's length.
 */
export function withoutLicenceSections(text: string): string {
  const out: string[] = [];
  let skipping = 0; // the level of the licence heading being skipped, 0 when keeping
  let inCode = false;
  for (const line of text.split('\n')) {
    if (/^[ \t]*```/.test(line)) inCode = !inCode;
    const heading = inCode ? null : /^(#{1,6})[ \t]+(.*)$/.exec(line);
    if (heading) {
      const level = heading[1].length;
      if (skipping && level <= skipping) skipping = 0;
      if (!skipping && /^licen[cs]e\b/i.test(heading[2].trim())) skipping = level;
    }
    if (!skipping) out.push(line);
  }
  return out.join('\n').trim();
}

/**
 * A corpus document as the demo ingests it: a package folder's README is titled `<package> README`,
 * made readable ({@link readableReadme}) and loses its licence sections ({@link withoutLicenceSections});
 * anything else is left as loaded.
 */
export function prepareDocument(folder: CorpusFolder, doc: SourceDocument): SourceDocument {
  if (!folder.title || !/(?:^|\/)readme\.md$/i.test(doc.uri)) return doc;
  return { ...doc, title: folder.title, text: withoutLicenceSections(readableReadme(doc.text)) };
}

/** The HTML elements READMEs use for layout, logos and badges (not `<T>` or `<string>` in prose). */
const HTML_TAG =
  /<\/?(?:a|b|br|center|details|div|em|h[1-6]|hr|i|img|kbd|p|picture|source|span|strong|sub|summary|sup|table|tbody|td|th|thead|tr)\b[^<>]*>/gi;

/**
 * Items retrieved per ask in the demo: with the local stand-in's 8,192-token window, twelve chunks of
 * context leave room for a few earlier turns, so a long session shows trimming.
 */
const DEMO_TOP_K = 12;

/**
 * Retrieval for the PostgreSQL manual (and `--docs`, English documentation): the project default,
 * hybrid with the text search configuration of the knowledge's detected language (`english` here)
 * and the embedder's weights (0.5 / 1 lexical, 1 / 1 semantic), the best recall@5 measured on the
 * manual per embedder (bench/RESULTS.md "Retrieval quality on the PostgreSQL manual").
 */
const MANUAL_RETRIEVAL: RetrievalSettings = { method: 'hybrid' };

/**
 * Retrieval for the fallback corpus (14 short READMEs): the vector leg alone. Judged by hand on its
 * 18-turn session: vector gave 11 useful answers of 15 answerable, 4 partial, and abstained on 3 of 3
 * unanswerable; hybrid-english gave 10 useful, 3 partial, 2 wrong abstentions and answered 1 of the 3
 * unanswerable (the stand-in's abstain threshold is fitted on vector scores, bench/abstain).
 */
const FALLBACK_RETRIEVAL: RetrievalSettings = { method: 'vector' };

/** One folder of a corpus, the name its documents' uris start with, and its documents' title. */
export interface CorpusFolder {
  dir: string;
  sourceName?: string;
  /**
   * Set for a package folder: `<package> README` (its README's own first heading is often a section
   * such as "Features" or "Description", which says nothing in an answer's citation).
   */
  title?: string;
}

/**
 * The stated subset of the manual `--semantic` ingests (page ids, the HTML file names): the chapters
 * postgresql-session.txt asks about (indexes, MVCC and isolation, vacuuming, EXPLAIN and the planner,
 * replication, WAL, backup and PITR), 50 pages of the manual's 1,170, so that semantic embedding
 * (~0.1 s of CPU per chunk) stays within a few minutes.
 */
export const SEMANTIC_SUBSET =
  /^(indexes|mvcc|transaction-iso|routine-vacuuming|maintenance|using-explain|planner-|performance-tips|warm-standby|high-availability|wal-|backup|continuous-archiving|sql-createindex|sql-vacuum|sql-explain|runtime-config-autovacuum|runtime-config-wal|runtime-config-replication|explicit-locking|applevel-consistency)/;

/** The manual page id of a loaded document (`…/html/routine-vacuuming.html` → `routine-vacuuming`). */
const pageId = (doc: SourceDocument) =>
  doc.uri
    .replace(/^.*\//, '')
    .replace(/\.html$/, '')
    .replace(/^.*#/, '');

/**
 * Where the demo's documents come from: `--docs`, else the PostgreSQL manual (unless `fallback`), else
 * the fallback corpus.
 */
export function chooseCorpus(
  docs?: string,
  options: { fallback?: boolean } = {},
): { name: string; short: string; folders: CorpusFolder[]; questions: string; retrieval: RetrievalSettings } {
  const questionsDir = join(ROOT, 'apps', 'ask-cli', 'questions');
  if (docs)
    return {
      name: `documents in ${docs}`,
      short: basename(resolve(docs)),
      folders: [{ dir: resolve(docs) }],
      questions: join(questionsDir, 'postgresql-session.txt'),
      retrieval: MANUAL_RETRIEVAL,
    };
  if (!options.fallback && existsSync(POSTGRES_MANUAL)) {
    return {
      name: 'PostgreSQL 15 manual',
      short: 'PostgreSQL 15 manual',
      folders: [{ dir: POSTGRES_MANUAL }],
      questions: join(questionsDir, 'postgresql-session.txt'),
      retrieval: MANUAL_RETRIEVAL,
    };
  }
  const folders = FALLBACK_PACKAGES.map((p) => ({
    dir: join(ROOT, 'node_modules', p),
    sourceName: p,
    title: `${p} README`,
  })).filter(({ dir }) => existsSync(dir) && readdirSync(dir).some((f) => f.toLowerCase().endsWith('.md')));
  return {
    name: 'package documentation (fallback corpus)',
    short: 'package documentation (fallback corpus)',
    folders,
    questions: join(questionsDir, 'fallback-session.txt'),
    retrieval: FALLBACK_RETRIEVAL,
  };
}

/**
 * Checks the demo's own inputs before anything is created or started: `--docs` must be a folder and
 * `--questions` a readable file with at least one question.
 * @throws Error naming the option and the path (as given, and resolved) when one is missing or wrong.
 */
export function checkDemoInputs(flags: { docs?: string; questions?: string }): void {
  if (flags.docs !== undefined) {
    const dir = resolve(flags.docs);
    if (!existsSync(dir)) throw new Error(`--docs ${flags.docs}: no such folder (${dir}); nothing was created`);
    if (!statSync(dir).isDirectory())
      throw new Error(`--docs ${flags.docs}: not a folder (${dir}); nothing was created`);
  }
  if (flags.questions !== undefined) {
    const file = resolve(flags.questions);
    if (!existsSync(file) || !statSync(file).isFile())
      throw new Error(`--questions ${flags.questions}: no such file (${file}); nothing was created`);
    if (readQuestions(file).length === 0)
      throw new Error(`--questions ${flags.questions}: no question in it (one per line; # starts a comment)`);
  }
}

/**
 * The demo project's name: `demo: ` and a short name of its corpus (`demo: PostgreSQL 15 manual`,
 * `demo: PostgreSQL 15 manual (semantic subset)`, `demo: my-notes` for `--docs ~/my-notes`), with
 * ` (semantic)` for the semantic embedder on a whole corpus. One project per corpus and embedder: two
 * embedding spaces never share a project.
 */
export function demoProjectName(
  corpus: { short: string },
  options: { semantic?: boolean; subset?: boolean } = {},
): string {
  return `demo: ${corpus.short}${options.subset ? ' (semantic subset)' : options.semantic ? ' (semantic)' : ''}`;
}

/**
 * `ask demo`: migrates, creates (or reuses) a project with the embedded local providers, ingests the
 * corpus, starts the gateway and the three workers (retrieval, synthesis, ingestion) as separate
 * processes, and runs a multi-turn session over HTTP + SSE, printing each streamed answer and each
 * turn's budget.
 */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('run the main job end to end on real documents with the embedded local providers')
    .option('--docs <dir>', 'your own folder of Markdown, text or JSONL documents')
    .option('--questions <file>', "one question per line (default: the corpus's session file)")
    .option(
      '--fallback',
      "use the fallback corpus (installed packages' READMEs) even when the PostgreSQL manual is present",
    )
    .option(
      '--semantic',
      'embed with the embedded semantic embedder (local-semantic, use-lite-512) instead of the lexical one; on the PostgreSQL manual, a stated 50-page subset',
    )
    .option('--keep-running', 'leave the stack running after the session (Ctrl-C to stop)')
    .action(async (flags: DemoFlags) => {
      checkDemoInputs(flags);
      const config = loadConfig();
      await ensureDatabase(config.DATABASE_URL);
      await runMigrations(config.DATABASE_URL);
      const corpus = chooseCorpus(flags.docs, { fallback: flags.fallback });
      const subset = flags.semantic && corpus.folders.length === 1 && corpus.folders[0].dir === POSTGRES_MANUAL;
      if (subset)
        corpus.name = `${corpus.name}, semantic subset (the 50 pages of the session's chapters, SEMANTIC_SUBSET)`;
      console.log(`corpus: ${corpus.name}`);
      if (!flags.docs && !flags.fallback && corpus.folders[0]?.dir !== POSTGRES_MANUAL)
        console.log(
          '  (the PostgreSQL 15 manual is not at ../shared/data/kb-postgresql-15-docs nor at $ASK_SHARED_DATA/kb-postgresql-15-docs: put it there to ask it instead)',
        );
      const embedding = flags.semantic ? 'local-semantic' : 'local';
      const name = demoProjectName(corpus, { semantic: flags.semantic, subset });
      const projectId = await withDatabase((ds, projects) =>
        demoProject(ds, projects, name, console.log, embedding, corpus.retrieval),
      );
      const apiKey = await withDatabase((ds) => demoApiKey(new ApiKeysRepository(ds), projectId));
      const uris = new Set<string>();
      for (const folder of corpus.folders) {
        const result = await ingestFolder(projectId, folder.dir, {
          progress: true,
          load: { sourceName: folder.sourceName, skipFile: (path) => NOT_DOCUMENTATION.test(path) },
          prepare: (doc) => prepareDocument(folder, doc),
          ...(subset ? { keep: (doc: SourceDocument) => SEMANTIC_SUBSET.test(pageId(doc)) } : {}),
        });
        for (const uri of result.uris) uris.add(uri);
      }
      const removed = await withDatabase((ds) => removeStaleSources(new KnowledgeRepository(ds), projectId, uris));
      if (removed.length)
        console.log(
          `removed ${count(removed.length, 'document')} no longer in the corpus (${removed.slice(0, 3).join(', ')}${removed.length > 3 ? ', …' : ''})`,
        );

      await withDatabase(async (_ds, projects) => {
        const project = await projects.findById(projectId);
        const e = project?.embeddingSettings;
        // After ingestion: the text search configuration follows the language detected in the knowledge.
        const r = effectiveRetrieval(project?.retrievalSettings, {
          embeddingProvider: e?.provider,
          textSearchConfig: project?.textSearchConfig,
        });
        console.log(
          `embedder: ${e?.provider}/${e?.model} (${e?.dimensions} dimensions); retrieval: ${r.method}` +
            (r.method === 'hybrid'
              ? ` (vector weight ${r.vectorWeight}, full text ${r.fulltextWeight}, text search ${r.textSearchConfig})`
              : r.method === 'fulltext'
                ? ` (text search ${r.textSearchConfig})`
                : ''),
        );
      });
      console.log('starting api-gateway, retrieval-worker, synthesis-worker and ingestion-worker…');
      const stack = await startStack({ env: { LOG_LEVEL: 'warn' } });
      console.log(`project: ${projectId}`);
      console.log(`api key: ${apiKey} (shown once, stored hashed; earlier demo keys of this project are revoked)`);
      console.log(`gateway: ${stack.gatewayUrl}`);
      try {
        const outcomes = await runSession(
          new AskClient(stack.gatewayUrl, apiKey),
          projectId,
          readQuestions(flags.questions ?? corpus.questions),
        );
        const failed = outcomes.filter((o) => o.error).length;
        console.log(`\n━━ ${count(outcomes.length, 'turn')}, ${outcomes.length - failed} answered, ${failed} failed`);
        console.log(`   turns dropped per turn: ${outcomes.map((o) => o.budget?.turnsDropped ?? '-').join(' ')}`);
        console.log(
          `   turns summarised per turn: ${outcomes.map((o) => (o.budget ? (o.budget.memory?.summarisedPairs ?? 0) : '-')).join(' ')}`,
        );
        const sessionId = outcomes[0]?.sessionId;
        if (flags.keepRunning) {
          console.log('\nstack running (Ctrl-C to stop). To reopen this session:');
          console.log(`  in a browser: ${stack.gatewayUrl}/ with project ${projectId} and API key ${apiKey}`);
          console.log(`                (the session "${sessionId}" is in its Sessions list)`);
          console.log('  from another shell, first run:');
          console.log(`  export ASK_GATEWAY=${stack.gatewayUrl}`);
          console.log(`  export ASK_PROJECT=${projectId} ASK_API_KEY=${apiKey}   # the demo's own project`);
          console.log('  then: npm run ask -- sessions');
          await new Promise<void>((r) => process.once('SIGINT', () => r()));
        } else {
          console.log(
            `   session: ${sessionId} (the stack stops now; npm run demo -- --keep-running keeps it up to open the session in the dashboard)`,
          );
        }
        if (failed) process.exitCode = 1;
      } finally {
        await stack.stop();
      }
    });
}

interface DemoFlags {
  docs?: string;
  questions?: string;
  fallback?: boolean;
  semantic?: boolean;
  keepRunning?: boolean;
}

/**
 * The demo's own project, named after its corpus: created on the embedded `local` providers, or
 * reused. A reused project whose providers were switched (the README's `project update`) is reset to
 * the local ones and the demo says so: the demo needs no credentials and no network. Its top-K is set
 * to {@link DEMO_TOP_K} and its retrieval to `retrieval` (the corpus's: {@link MANUAL_RETRIEVAL} or
 * {@link FALLBACK_RETRIEVAL}).
 * @returns the project id.
 */
export async function demoProject(
  ds: DataSource,
  projects: ProjectsRepository,
  name: string,
  log: (line: string) => void = console.log,
  embedding: 'local' | 'local-semantic' = 'local',
  retrieval: RetrievalSettings = MANUAL_RETRIEVAL,
): Promise<string> {
  const local = toSettings({ embeddingProvider: embedding }, true);
  const rows: Array<{ id: string }> = await ds.query(
    'SELECT id FROM projects WHERE name = $1 ORDER BY created_at LIMIT 1',
    [name],
  );
  const found = rows[0] ? await projects.findById(rows[0].id) : null;
  if (!found) {
    const created = await projects.create({ ...local, name, topK: DEMO_TOP_K, retrievalSettings: retrieval });
    log(`project: created "${name}" (${created.id}) on the embedded local providers`);
    return created.id;
  }
  const was = (s: { provider: string; model: string } | null) => (s ? `${s.provider}/${s.model}` : 'none');
  const llmLocal = found.llmSettings?.provider === 'local';
  const emb = found.embeddingSettings;
  const want = local.embeddingSettings;
  const embeddingLocal =
    !!emb && !!want && emb.provider === want.provider && emb.model === want.model && emb.dimensions === want.dimensions;
  if (!llmLocal || !embeddingLocal) {
    log(
      `project "${name}" had LLM ${was(found.llmSettings)} and embeddings ${was(emb)}; reset to the embedded local providers ` +
        '(the demo runs with no credentials; switch providers on a project of your own: npm run ask -- project create --name mine)',
    );
  }
  await projects.updateSettings(found.id, {
    topK: DEMO_TOP_K,
    retrievalSettings: retrieval,
    ...(llmLocal ? {} : { llmSettings: local.llmSettings }),
    ...(embeddingLocal ? {} : { embeddingSettings: local.embeddingSettings }),
  });
  log(`project: reusing "${name}" (${found.id})`);
  return found.id;
}

/** Deletes the project's knowledge sources whose uri is not in `keep`; returns the deleted uris. */
async function removeStaleSources(
  knowledge: KnowledgeRepository,
  projectId: string,
  keep: ReadonlySet<string>,
): Promise<string[]> {
  const stale = (await knowledge.listSources(projectId)).map((s) => s.uri).filter((uri) => !keep.has(uri));
  for (const uri of stale) await knowledge.deleteSource(projectId, uri);
  return stale;
}

/**
 * A fresh API key of the demo project, named `demo`. A key is stored only as a hash, so an earlier
 * run's key cannot be shown again: it is revoked and a new one created (printed once by the caller).
 */
async function demoApiKey(keys: ApiKeysRepository, projectId: string): Promise<string> {
  for (const key of await keys.list(projectId)) {
    if (key.name === 'demo' && key.revokedAt === null) await keys.revoke(projectId, key.id);
  }
  return (await keys.create(projectId, 'demo')).key;
}
