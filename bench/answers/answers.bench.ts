/**
 * The local stand-in's answers to the demo's PostgreSQL session, so that whether at least 12 of its 14
 * answerable turns read as useful can be checked again after every change; with the figures that
 * need no judgement. Whether an answer is useful is judged by hand from the answers this bench writes;
 * the bench only makes that reading repeatable and shows what a change to the stand-in moved.
 *
 *   node tools/run-ts.js bench/answers/answers.bench.ts [--data DIR] [--dump-contexts FILE]
 *
 * The PostgreSQL 15 manual (`DIR/kb-postgresql-15-docs`, DIR defaulting to ../shared/data beside the
 * repo) is ingested with the embedded `local-lexical-v1` embedder into a throwaway database, as the
 * demo ingests it. Each question of apps/ask-cli/questions/postgresql-session.txt is embedded and
 * searched as the retrieval worker does for the demo's project (`demoProject`: its top-K and
 * retrieval settings, the text search configuration detected at ingestion), every retrieved
 * item is rendered as libs/context-budget renders it, and the stand-in (`composeAnswer`, told the
 * retrieval's `relevanceJudgement`, as the synthesis worker tells it) answers. Each question is asked
 * alone: the demo's later turns also carry earlier turns and may drop low-relevance items to make room
 * for them, which this bench does not do.
 *
 * Per answerable question, against bench/answers/expectations.jsonl (written once, by hand, from the
 * manual's pages: the pages that answer it, and the terms a first sentence on point holds):
 * - cites: the answer cites an expected page (by its title);
 * - first quote on page: the first quoted sentence comes from an expected page;
 * - lead term: the first quoted sentence holds one of the question's `lead` terms (any case);
 * - quotes and characters of the answer (its Sources line included).
 * Per question the manual does not cover (`? `): whether the stand-in abstained.
 * Writes bench/answers/results.json (the figures and every answer) and its own section of
 * bench/RESULTS.md. `--dump-contexts FILE` also writes the rendered prompts, for reading.
 * @throws Error when the manual is missing (naming the folder and `--data`).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { commandLine, gitCommit, machine, writeResultsSection } from '../common';
import { renderContextItem } from '@ask/context-budget';
import { IngestionService, loadDocuments } from '@ask/ingestion';
import { composeAnswer, LocalEmbeddingProvider } from '@ask/llm-providers';
import { effectiveRetrieval, relevanceJudgement } from '@ask/ask-contracts';
import {
  CredentialsCipher,
  InsightsRepository,
  KnowledgeRepository,
  ProjectsRepository,
  RetrievalRepository,
} from '@ask/persistence';
import { createTestDatabase } from '@ask/persistence/testing';
import {
  type CorpusFolder,
  demoProject,
  NOT_DOCUMENTATION,
  prepareDocument,
} from '../../apps/ask-cli/src/commands/demo.command';
import { readQuestionFile } from '../../apps/ask-cli/src/commands/session.command';

const ROOT = resolve(__dirname, '..', '..');
const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const DATA = resolve(arg('data') ?? resolve(ROOT, '..', 'shared', 'data'));
const MANUAL = join(DATA, 'kb-postgresql-15-docs');
const QUESTIONS = join(ROOT, 'apps', 'ask-cli', 'questions', 'postgresql-session.txt');
const EXPECTATIONS = join(__dirname, 'expectations.jsonl');
const SECTION = "## The local stand-in's answers to the PostgreSQL session";
const ABSTAINED = /^The knowledge base does not seem to cover this question/m;
/** Passages the stand-in may quote, as the synthesis worker constructs it (the option's default). */
const MAX_PASSAGES = 4;

interface Expectation {
  question: string;
  /** Page ids of the manual (its HTML file names) that answer the question. */
  pages: string[];
  /** Terms a first sentence on point holds (any one, any case). */
  lead: string[];
}

interface Row {
  question: string;
  covered: boolean;
  answer: string;
  abstained: boolean;
  quotes: number;
  chars: number;
  cites?: boolean;
  firstOnPage?: boolean;
  leadTerm?: boolean;
}

/** The quoted sentences of an answer (`- sentence [n: title]`), in answer order, with their titles. */
export function quotedLines(answer: string): Array<{ sentence: string; title: string }> {
  const out: Array<{ sentence: string; title: string }> = [];
  for (const line of answer.split('\n')) {
    const m = /^\s*(?:- |\d+\. )(.*) \[\d+: (.*)\]$/.exec(line);
    if (m) out.push({ sentence: m[1], title: m[2] });
  }
  return out;
}

async function main(): Promise<void> {
  if (!existsSync(MANUAL)) {
    throw new Error(
      `bench/answers needs the PostgreSQL 15 manual at ${MANUAL}; pass --data DIR for the folder holding kb-postgresql-15-docs`,
    );
  }
  const expectations = new Map<string, Expectation>(
    readFileSync(EXPECTATIONS, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Expectation)
      .map((e) => [e.question, e]),
  );
  // The demo's corpus, loaded and prepared as the demo does (its licence file is not documentation).
  const folder: CorpusFolder = { dir: MANUAL };
  const documents = (
    await loadDocuments(MANUAL, { sourceName: folder.sourceName, skipFile: (p) => NOT_DOCUMENTATION.test(p) })
  ).map((doc) => prepareDocument(folder, doc));
  // Page id → title: the manual's JSONL names each page by its HTML file and its title.
  const titleOf = new Map<string, string>();
  for (const file of ['postgresql-15-docs.jsonl'])
    for (const line of readFileSync(join(MANUAL, file), 'utf8').split('\n'))
      if (line.trim()) {
        const page = JSON.parse(line) as { id: string; title: string };
        titleOf.set(page.id, page.title);
      }

  const db = await createTestDatabase();
  const rows: Row[] = [];
  const contexts: Array<{ question: string; prompt: string }> = [];
  let chunks = 0;
  try {
    const ds = db.dataSource;
    const projects = new ProjectsRepository(ds, new CredentialsCipher(undefined));
    const embedder = new LocalEmbeddingProvider();
    // The demo's project: its top-K and retrieval settings, on the embedded local providers.
    const id = await demoProject(ds, projects, 'answers bench: PostgreSQL 15 manual', () => undefined);
    const ingested = await new IngestionService(new KnowledgeRepository(ds), new InsightsRepository(ds)).ingest(
      id,
      documents,
      embedder,
    );
    chunks = ingested.chunks;
    // After ingestion: the text search configuration follows the language detected in the knowledge.
    const project = await projects.findById(id);
    if (!project) throw new Error(`the bench's project ${id} is gone`);
    const settings = effectiveRetrieval(project.retrievalSettings, {
      embeddingProvider: embedder.provider,
      textSearchConfig: project.textSearchConfig,
    });
    const retrieval = new RetrievalRepository(ds);
    for (const q of readQuestionFile(QUESTIONS)) {
      const [vector] = await embedder.embed([q.question]);
      const items = await retrieval.searchHybrid(
        project.id,
        q.question,
        vector,
        project.topK,
        `${embedder.provider}/${embedder.model}`,
        { vector: settings.vectorWeight, fulltext: settings.fulltextWeight },
      );
      const relevance = relevanceJudgement(items, embedder.model, settings.method);
      const prompt = `${items
        .map((item, i) =>
          renderContextItem({ kind: item.kind, title: item.title, score: item.score, text: item.text }, i),
        )
        .join('')}${q.question}`;
      contexts.push({ question: q.question, prompt });
      const answer = composeAnswer([{ role: 'user', content: prompt }], MAX_PASSAGES, relevance);
      const quotes = quotedLines(answer);
      const row: Row = {
        question: q.question,
        covered: q.covered,
        answer,
        abstained: ABSTAINED.test(answer),
        quotes: quotes.length,
        chars: answer.length,
      };
      const expected = expectations.get(q.question);
      if (q.covered && expected) {
        const titles = new Set(expected.pages.map((id) => titleOf.get(id) ?? id));
        row.cites = quotes.some((x) => titles.has(x.title));
        row.firstOnPage = quotes.length > 0 && titles.has(quotes[0].title);
        const first = quotes[0]?.sentence.toLowerCase() ?? '';
        row.leadTerm = expected.lead.some((t) => first.includes(t.toLowerCase()));
      }
      rows.push(row);
    }
  } finally {
    await db.drop();
  }

  const dump = arg('dump-contexts');
  if (dump) writeFileSync(resolve(dump), `${JSON.stringify(contexts, null, 1)}\n`);
  const covered = rows.filter((r) => r.covered);
  const uncovered = rows.filter((r) => !r.covered);
  const countOf = (pick: (r: Row) => boolean | undefined) => covered.filter((r) => pick(r) === true).length;
  const run = { commit: gitCommit(), date: new Date().toISOString(), machine: machine() };
  const medianChars = [...covered.map((r) => r.chars)].sort((a, b) => a - b)[Math.floor(covered.length / 2)] ?? 0;
  const summary = {
    questions: covered.length,
    answered: covered.filter((r) => !r.abstained).length,
    cites: countOf((r) => r.cites),
    firstOnPage: countOf((r) => r.firstOnPage),
    leadTerm: countOf((r) => r.leadTerm),
    medianChars,
    uncovered: uncovered.length,
    uncoveredAbstained: uncovered.filter((r) => r.abstained).length,
  };
  const yes = (v: boolean | undefined) => (v === undefined ? '–' : v ? 'yes' : 'no');
  const firstLine = (r: Row) =>
    (quotedLines(r.answer)[0]?.sentence ?? r.answer.split('\n')[0]).replace(/\|/g, '\\|').slice(0, 110);
  const markdown = [
    SECTION,
    '',
    commandLine(
      'node tools/run-ts.js bench/answers/answers.bench.ts',
      run,
      `; ${documents.length} pages, ${chunks} chunks, embedder \`local-lexical-v1\`, the project's default retrieval, each question asked alone`,
    ),
    '',
    "**Usefulness is judged by hand, not by this bench**: the figures below need no judgement (does the answer cite a page that answers the question, is its first quote from one, does that quote hold a term of the question's focus, how long is it), against expectations written once in bench/answers/expectations.jsonl. Read the answers in bench/answers/results.json to judge them.",
    '',
    `Answerable questions: ${summary.answered}/${summary.questions} answered; cites an answering page ${summary.cites}/${summary.questions}; first quote from one ${summary.firstOnPage}/${summary.questions}; first quote holds a focus term ${summary.leadTerm}/${summary.questions}; median answer ${summary.medianChars} characters. Off-topic questions abstained: ${summary.uncoveredAbstained}/${summary.uncovered}.`,
    '',
    '| question | cites | first quote on page | focus term | quotes | chars | first quote (110 characters) |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.covered ? '' : '? '}${r.question} | ${r.covered ? yes(r.cites) : r.abstained ? 'abstained' : 'answered'} | ${yes(r.firstOnPage)} | ${yes(r.leadTerm)} | ${r.quotes} | ${r.chars} | ${firstLine(r)} |`,
    ),
  ].join('\n');
  writeFileSync(
    join(__dirname, 'results.json'),
    `${JSON.stringify({ commit: run.commit, date: run.date, summary, questions: rows }, null, 2)}\n`,
  );
  writeResultsSection(SECTION, markdown);
  console.log(`\n${markdown}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
