/**
 * Calibration of the local stand-in's abstain threshold (a measured figure, not a guess): the retrieval score of the best
 * item below which the stand-in answers that the knowledge base does not seem to cover the question.
 *
 *   node tools/run-ts.js bench/abstain/abstain.bench.ts [--data DIR]
 *
 * Two corpora, each with its question file (apps/ask-cli/questions; a `? ` line is a question the
 * corpus does not cover): the fallback corpus of `npm run demo` (the READMEs of installed packages,
 * selected exactly as the demo selects them) with fallback-session.txt, and the PostgreSQL 15 manual
 * (`DIR/kb-postgresql-15-docs`, DIR defaulting to ../shared/data beside the repo) with
 * postgresql-session.txt. Each is ingested with the embedded `local-lexical-v1` embedder into a
 * throwaway database, and each question is embedded and searched as the retrieval worker does
 * (`RetrievalRepository.search`, top-K 12), keeping the best score as the prompt shows it (2 decimals).
 * The threshold is fitted on the fallback file (the value that classifies the most questions
 * right, ties to the widest gap) and checked on the PostgreSQL file, a different source; then the
 * stand-in itself (`composeAnswer` on the rendered items) is run with it on both files.
 * Writes bench/abstain/results.json and its own section of bench/RESULTS.md.
 * @throws Error when the manual is missing (naming the folder and `--data`).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gitCommit, machine, writeResultsSection } from '../common';
import { renderContextItem } from '@ask/context-budget';
import { IngestionService, loadDocuments, type SourceDocument } from '@ask/ingestion';
import { composeAnswer, LocalEmbeddingProvider } from '@ask/llm-providers';
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
  /** Best retrieval score as rendered in the prompt (2 decimals). */
  best: number;
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
      const items = await retrieval.search(project.id, vector, TOP_K, `${embedder.provider}/${embedder.model}`);
      const context = items
        .map((item, i) =>
          renderContextItem({ kind: item.kind, title: item.title, score: item.score, text: item.text }, i),
        )
        .join('');
      out.push({
        ...q,
        best: items.length ? Number(items[0].score.toFixed(2)) : -1,
        topTitle: items[0]?.title ?? '',
        context,
      });
    }
    return out;
  } finally {
    await db.drop();
  }
}

/** Questions classified right by "abstain when best < t". */
function correct(rows: readonly Scored[], t: number): number {
  return rows.filter((r) => r.best >= t === r.covered).length;
}

/** The threshold classifying the most rows right; ties go to the one farthest from any score. */
function fit(rows: readonly Scored[]): number {
  const scores = [...new Set(rows.map((r) => r.best))].sort((a, b) => a - b);
  const candidates = scores
    .map((s, i) => (i === 0 ? s - 0.01 : (scores[i - 1] + s) / 2))
    .concat([scores[scores.length - 1] + 0.01]);
  let best = candidates[0];
  let bestKey = [-1, -1];
  for (const t of candidates) {
    const gap = Math.min(...scores.map((s) => Math.abs(s - t)));
    const key = [correct(rows, t), gap];
    if (key[0] > bestKey[0] || (key[0] === bestKey[0] && key[1] > bestKey[1])) [best, bestKey] = [t, key];
  }
  return Math.round(best * 1000) / 1000;
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

function standInAbstains(r: Scored, t: number): boolean {
  return ABSTAINED.test(composeAnswer([{ role: 'user', content: `${r.context}${r.question}` }], 4, t));
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
  const threshold = fit(fallback);
  const reverse = fit(manual);
  const sets = { 'fallback-session.txt (fit)': fallback, 'postgresql-session.txt (held out)': manual };
  const rows = Object.entries(sets).map(([file, scored]) => {
    const byScore = confusion(scored, (r) => r.best < threshold);
    const byStandIn = confusion(scored, (r) => standInAbstains(r, threshold));
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
    `Command: \`node tools/run-ts.js bench/abstain/abstain.bench.ts\` · commit ${gitCommit()} · ${machine().nproc} cores · embedder \`local-lexical-v1\`, top-K ${TOP_K}.`,
    '',
    `Fitted on fallback-session.txt over the fallback corpus (package READMEs): **abstain below ${threshold}** (best retrieval score, as the prompt shows it).`,
    `Checked on postgresql-session.txt over the PostgreSQL 15 manual (another source). Fitted the other way round the threshold would be ${reverse}.`,
    '',
    '| question file | median best score, covered | median, not covered | score rule alone: covered · not covered | the stand-in (score rule, or no retrieved sentence shares a keyword): covered · not covered |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.file} | ${medians(r.scored, true)} | ${medians(r.scored, false)} | ${cell(r.byScore)} | ${cell(r.byStandIn)} |`,
    ),
    '',
    'The threshold is `LOCAL_ABSTAIN_THRESHOLDS` in libs/llm-providers/src/local/local-chat.provider.ts; the stand-in also abstains when no retrieved sentence shares a keyword with the question.',
  ].join('\n');
  writeFileSync(
    join(__dirname, 'results.json'),
    `${JSON.stringify({ threshold, reverse, files: rows.map((r) => ({ file: r.file, byScore: r.byScore, byStandIn: r.byStandIn, questions: r.scored.map(({ context: _c, ...q }) => q) })) }, null, 2)}\n`,
  );
  writeResultsSection(SECTION, markdown);
  console.log(`\n${markdown}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
