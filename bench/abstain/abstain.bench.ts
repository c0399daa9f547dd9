/**
 * The local stand-in's abstain on the session question files (since the retrieval's full text ranks by BM25, the one
 * relevance judgement): the stand-in answers that the knowledge base does not seem to cover the
 * question when the retrieval's `relevanceJudgement` (ask-contracts `ABSTAIN_RULES`, fitted on the fit
 * corpora of bench/retrieval, not here) says nothing relevant was found.
 *
 *   node tools/run-ts.js bench/abstain/abstain.bench.ts [--data DIR]
 *
 * Two corpora, each with its question file (apps/ask-cli/questions; a `? ` line is a question the
 * corpus does not cover): the fallback corpus of `npm run demo` (the READMEs of installed packages,
 * selected exactly as the demo selects them) with fallback-session.txt, and the PostgreSQL 15 manual
 * (`DIR/kb-postgresql-15-docs`, DIR defaulting to ../shared/data beside the repo) with
 * postgresql-session.txt. Each is ingested with the embedded `local-lexical-v1` embedder into a
 * throwaway database, and each question is embedded and searched as the retrieval worker does for a
 * project with no retrieval settings (hybrid, the detected text search configuration, the embedder's
 * default weights; top-K 12), keeping the best evidence (`relevanceEvidence`). Nothing is fitted here:
 * the judgement alone and the stand-in itself (`composeAnswer` on the rendered items, told the
 * judgement) are scored on both files.
 * Writes bench/abstain/results.json and its own section of bench/RESULTS.md.
 * @throws Error when the manual is missing (naming the folder and `--data`).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gitCommit, machine, writeResultsSection } from '../common';
import { renderContextItem } from '@ask/context-budget';
import { IngestionService, loadDocuments, type SourceDocument } from '@ask/ingestion';
import { composeAnswer, LocalEmbeddingProvider, type StandInRelevance } from '@ask/llm-providers';
import { ABSTAIN_RULES, effectiveRetrieval, relevanceJudgement } from '@ask/ask-contracts';
import {
  CredentialsCipher,
  InsightsRepository,
  KnowledgeRepository,
  ProjectsRepository,
  RetrievalRepository,
} from '@ask/persistence';
import { createTestDatabase } from '@ask/persistence/testing';
import { chooseCorpus, NOT_DOCUMENTATION, prepareDocument } from '../../apps/ask-cli/src/commands/demo.command';
import { readQuestionFile, type SessionQuestion } from '../../apps/ask-cli/src/commands/session.command';

const ROOT = resolve(__dirname, '..', '..');
const dataArg = process.argv.indexOf('--data');
const DATA = dataArg >= 0 ? resolve(process.argv[dataArg + 1]) : resolve(ROOT, '..', 'shared', 'data');
const MANUAL = join(DATA, 'kb-postgresql-15-docs');
const QUESTIONS = join(ROOT, 'apps', 'ask-cli', 'questions');
const SECTION = '## Abstain threshold of the local stand-in';
const TOP_K = 12;
const ABSTAINED = /^The knowledge base does not seem to cover this question/m;

interface Scored extends SessionQuestion {
  /** Best item's relevance evidence (`relevanceEvidence`), -1 when nothing was retrieved. */
  best: number;
  /** The retrieval's judgement, as the stand-in is told it. */
  relevance: StandInRelevance;
  topTitle: string;
  /** The rendered context block of the prompt (what the stand-in reads). */
  context: string;
}

async function fallbackDocuments(): Promise<SourceDocument[]> {
  const docs: SourceDocument[] = [];
  for (const folder of chooseCorpus(undefined, { fallback: true }).folders) {
    for (const doc of await loadDocuments(folder.dir, {
      sourceName: folder.sourceName,
      skipFile: (p) => NOT_DOCUMENTATION.test(p),
    })) {
      docs.push(prepareDocument(folder, doc));
    }
  }
  return docs;
}

async function scoreCorpus(name: string, documents: SourceDocument[], questionFile: string): Promise<Scored[]> {
  const db = await createTestDatabase();
  try {
    const ds = db.dataSource;
    const projects = new ProjectsRepository(ds, new CredentialsCipher(undefined));
    const embedder = new LocalEmbeddingProvider();
    const project = await projects.create({
      name: `abstain bench: ${name}`,
      llmSettings: { provider: 'local', model: 'local' },
      embeddingSettings: { provider: 'local', model: embedder.model, dimensions: embedder.dimensions },
    });
    const started = Date.now();
    const result = await new IngestionService(new KnowledgeRepository(ds), new InsightsRepository(ds)).ingest(
      project.id,
      documents,
      embedder,
    );
    console.log(
      `${name}: ${result.sources} documents, ${result.chunks} chunks in ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    const retrieval = new RetrievalRepository(ds);
    const out: Scored[] = [];
    for (const q of readQuestionFile(questionFile)) {
      const [vector] = await embedder.embed([q.question]);
      const settings = effectiveRetrieval(project.retrievalSettings, {
        embeddingProvider: embedder.provider,
        textSearchConfig: project.textSearchConfig,
      });
      const items = await retrieval.searchHybrid(
        project.id,
        q.question,
        vector,
        TOP_K,
        `${embedder.provider}/${embedder.model}`,
        { vector: settings.vectorWeight, fulltext: settings.fulltextWeight },
      );
      const relevance = relevanceJudgement(items, embedder.model, settings.method);
      if (!relevance) throw new Error(`no relevance judgement for ${embedder.model} under ${settings.method}`);
      const context = items
        .map((item, i) =>
          renderContextItem({ kind: item.kind, title: item.title, score: item.score, text: item.text }, i),
        )
        .join('');
      out.push({
        ...q,
        best: relevance.evidence ?? -1,
        relevance,
        topTitle: items[0]?.title ?? '',
        context,
      });
    }
    return out;
  } finally {
    await db.drop();
  }
}

function confusion(rows: readonly Scored[], abstains: (r: Scored) => boolean) {
  const covered = rows.filter((r) => r.covered);
  const uncovered = rows.filter((r) => !r.covered);
  return {
    coveredAnswered: covered.filter((r) => !abstains(r)).length,
    covered: covered.length,
    uncoveredAbstained: uncovered.filter((r) => abstains(r)).length,
    uncovered: uncovered.length,
  };
}

function standInAbstains(r: Scored): boolean {
  return ABSTAINED.test(composeAnswer([{ role: 'user', content: `${r.context}${r.question}` }], 4, r.relevance));
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

async function main(): Promise<void> {
  if (!existsSync(MANUAL)) {
    throw new Error(
      `bench/abstain needs the PostgreSQL 15 manual at ${MANUAL} (the held-out check); pass --data DIR for the folder holding kb-postgresql-15-docs`,
    );
  }
  const fallback = await scoreCorpus(
    'fallback corpus',
    await fallbackDocuments(),
    join(QUESTIONS, 'fallback-session.txt'),
  );
  const manual = await scoreCorpus(
    'PostgreSQL 15 manual',
    await loadDocuments(MANUAL),
    join(QUESTIONS, 'postgresql-session.txt'),
  );
  const threshold = fallback[0]?.relevance.below ?? manual[0]?.relevance.below;
  const sets = { 'fallback-session.txt': fallback, 'postgresql-session.txt': manual };
  const rows = Object.entries(sets).map(([file, scored]) => {
    const byScore = confusion(scored, (r) => r.relevance.nothingRelevant);
    const byStandIn = confusion(scored, (r) => standInAbstains(r));
    return { file, scored, byScore, byStandIn };
  });
  for (const { file, scored } of rows) {
    console.log(`\n${file}`);
    for (const r of scored)
      console.log(`  ${r.covered ? ' ' : '?'} ${r.best.toFixed(2)}  ${r.question}  [${r.topTitle}]`);
  }
  const cell = (c: ReturnType<typeof confusion>) =>
    `${c.coveredAnswered}/${c.covered} answered · ${c.uncoveredAbstained}/${c.uncovered} abstained`;
  const medians = (scored: Scored[], covered: boolean) =>
    median(scored.filter((r) => r.covered === covered).map((r) => r.best)).toFixed(3);
  const markdown = [
    SECTION,
    '',
    `Command: \`node tools/run-ts.js bench/abstain/abstain.bench.ts\` · commit ${gitCommit()} · ${machine().nproc} cores · embedder \`local-lexical-v1\`, hybrid (project default), top-K ${TOP_K}.`,
    '',
    `The one relevance judgement (ask-contracts \`ABSTAIN_RULES\`: **nothing relevant when no item's idf-weighted coverage of the question reaches ${threshold}**, a question lexeme no row of the project holds counting ${ABSTAIN_RULES['local-lexical-v1'].absentWeight} times in the coverage's denominator), fitted on the fit corpora of bench/retrieval (the PostgreSQL manual's questions.jsonl, redis-doc, rust-book, prometheus-docs, curl-docs), not on these files; nothing is fitted here.`,
    'fallback-session.txt over the fallback corpus (package READMEs, a source no choice was made on); postgresql-session.txt over the PostgreSQL 15 manual (a fit corpus, another question file).',
    '',
    '| question file | median best evidence, covered | median, not covered | judgement alone: covered · not covered | the stand-in (judgement, or no retrieved sentence shares a keyword): covered · not covered |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.file} | ${medians(r.scored, true)} | ${medians(r.scored, false)} | ${cell(r.byScore)} | ${cell(r.byStandIn)} |`,
    ),
    '',
    "The same judgement is the planner's relevance floor (libs/context-budget `relevanceFloor`) and `ask eval`'s abstention; the stand-in also abstains when no retrieved sentence shares a keyword with the question.",
  ].join('\n');
  writeFileSync(
    join(__dirname, 'results.json'),
    `${JSON.stringify({ threshold, files: rows.map((r) => ({ file: r.file, byScore: r.byScore, byStandIn: r.byStandIn, questions: r.scored.map(({ context: _c, relevance: _r, ...q }) => q) })) }, null, 2)}\n`,
  );
  writeResultsSection(SECTION, markdown);
  console.log(`\n${markdown}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
