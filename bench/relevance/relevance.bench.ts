/**
 * The relevance floor per embedder and retrieval method, measured rather than guessed, on the PostgreSQL 15 manual.
 *
 *   node tools/run-ts.js bench/relevance/relevance.bench.ts [--distractors N] [--top-k K]
 *
 * The corpus and questions are bench/retrieval's (every answering page of bench/retrieval/questions.jsonl
 * plus N other pages chosen by hash, default 100; ingested as the service does, embedder `local`,
 * `local-lexical-v1`). Each question is searched top-K (default 8, the project default) with each
 * method as the retrieval worker runs it for a project that sets nothing but the method: vector,
 * full text (detected configuration) and hybrid (the embedder's default weights 0.5 / 1), plus hybrid 1 / 1.
 *
 * The floor is the one relevance judgement (ask-contracts `ABSTAIN_RULES` via `relevanceFloor`, fitted
 * on the fit corpora, not here), applied as the planner applies it: a question none of whose items'
 * evidence (`itemRelevance`: idf-weighted coverage of the question) reaches it found nothing relevant,
 * and all its items are low-relevance (the stand-in abstains); otherwise all are relevant. Nothing is fitted here; per method (no floor under vector
 * alone) it reports: answerable questions whose top-K held an answering chunk that keep one at or
 * above the floor, answering chunks kept, items of unanswerable questions below it, other items of
 * answerable questions below it, and "nothing relevant" on the unanswerable and answerable questions.
 * Writes bench/relevance/results.json and the "Relevance floor per embedder and retrieval method"
 * section of bench/RESULTS.md.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gitCommit, machine, numberArg, sharedDataDir, writeResultsSection } from '../common';
import { IngestionService, loadDocuments, type SourceDocument } from '@ask/ingestion';
import { LocalEmbeddingProvider } from '@ask/llm-providers';
import { effectiveRetrieval, relevanceEvidence, type RetrievalMethod, type RetrievedItem } from '@ask/ask-contracts';
import { relevanceFloor } from '@ask/context-budget';
import {
  CredentialsCipher,
  InsightsRepository,
  KnowledgeRepository,
  ProjectsRepository,
  RetrievalRepository,
} from '@ask/persistence';
import { createTestDatabase } from '@ask/persistence/testing';

const SECTION = '## Relevance floor per embedder and retrieval method';
const dataArg = process.argv.indexOf('--data');
const DATA = dataArg >= 0 ? resolve(process.argv[dataArg + 1]) : sharedDataDir(['kb-postgresql-15-docs']);
const DISTRACTORS = numberArg('distractors', 100, 0);
const TOP_K = numberArg('top-k', 8);

interface Question {
  question: string;
  pages: string[];
}

const pageOf = (item: RetrievedItem) =>
  (item.source ?? '')
    .replace(/^.*\//, '')
    .replace(/\.html$/, '')
    .replace(/^.*#/, '');

/** One question's retrieved items: relevance evidence and whether the chunk is from an answering page. */
type Row = { answerable: boolean; items: Array<{ score: number; answers: boolean }> };

/** At floor t: answerable questions (of those that retrieved an answering chunk) that keep one; answering chunks kept; items of unanswerable questions dropped. */
function rates(rows: Row[], t: number) {
  const found = rows.filter((r) => r.answerable && r.items.some((i) => i.answers));
  const kept = found.filter((r) => r.items.some((i) => i.answers && i.score >= t)).length;
  const answering = rows.flatMap((r) => r.items.filter((i) => i.answers));
  const unrelated = rows.filter((r) => !r.answerable).flatMap((r) => r.items);
  const others = rows.filter((r) => r.answerable).flatMap((r) => r.items.filter((i) => !i.answers));
  return {
    recall: `${kept}/${found.length}`,
    recallShare: found.length ? kept / found.length : 1,
    answeringKept: `${answering.filter((i) => i.score >= t).length}/${answering.length}`,
    unanswerableDropped: `${unrelated.filter((i) => i.score < t).length}/${unrelated.length}`,
    otherDropped: `${others.filter((i) => i.score < t).length}/${others.length}`,
  };
}

/** Questions none of whose items reaches the floor (or that retrieved nothing): "nothing relevant". */
function nothingRelevant(rows: Row[], t: number, answerable: boolean): string {
  const of = rows.filter((r) => r.answerable === answerable);
  return `${of.filter((r) => !r.items.some((i) => i.score >= t)).length}/${of.length}`;
}

async function main(): Promise<void> {
  const questions: Question[] = readFileSync(join(__dirname, '..', 'retrieval', 'questions.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
  const all = await loadDocuments(join(DATA, 'kb-postgresql-15-docs'), { sourceName: 'postgresql-15' });
  const idOf = (doc: SourceDocument) => doc.uri.replace(/^.*\//, '').replace(/\.html$/, '');
  const needed = new Set(questions.flatMap((q) => q.pages));
  const hash = (s: string) => createHash('sha256').update(s).digest('hex');
  const others = all.filter((d) => !needed.has(idOf(d))).sort((a, b) => (hash(idOf(a)) < hash(idOf(b)) ? -1 : 1));
  const corpus = [...all.filter((d) => needed.has(idOf(d))), ...others.slice(0, DISTRACTORS)];
  const db = await createTestDatabase();
  const embedder = new LocalEmbeddingProvider();
  const results: Array<{
    method: string;
    floor: number | null;
    rates: ReturnType<typeof rates>;
    unanswerableNothing: string;
    answerableNothing: string;
  }> = [];
  try {
    const ds = db.dataSource;
    const projects = new ProjectsRepository(ds, new CredentialsCipher(undefined));
    const retrieval = new RetrievalRepository(ds);
    const project = await projects.create({
      name: 'relevance bench',
      embeddingSettings: { provider: embedder.provider, model: embedder.model, dimensions: embedder.dimensions },
    });
    await new IngestionService(new KnowledgeRepository(ds), new InsightsRepository(ds)).ingest(
      project.id,
      corpus,
      embedder,
    );
    await new KnowledgeRepository(ds).refreshStatistics();
    const model = `${embedder.provider}/${embedder.model}`;
    const weights = effectiveRetrieval(null, { embeddingProvider: embedder.provider });
    const methods: Array<{
      name: string;
      method: RetrievalMethod;
      run: (q: Question, v: number[]) => Promise<RetrievedItem[]>;
    }> = [
      { name: 'vector', method: 'vector', run: (_q, v) => retrieval.search(project.id, v, TOP_K, model) },
      {
        name: 'fulltext',
        method: 'fulltext',
        run: (q, v) => retrieval.searchFullText(project.id, q.question, v, TOP_K, model),
      },
      {
        name: `hybrid (default ${weights.vectorWeight} / ${weights.fulltextWeight})`,
        method: 'hybrid',
        run: (q, v) =>
          retrieval.searchHybrid(project.id, q.question, v, TOP_K, model, {
            vector: weights.vectorWeight,
            fulltext: weights.fulltextWeight,
          }),
      },
      {
        name: 'hybrid 1 / 1',
        method: 'hybrid',
        run: (q, v) => retrieval.searchHybrid(project.id, q.question, v, TOP_K, model, { vector: 1, fulltext: 1 }),
      },
    ];
    const vectors = await Promise.all(questions.map(async (q) => (await embedder.embed([q.question]))[0]));
    for (const method of methods) {
      const judged = relevanceFloor(embedder.model, method.method);
      const rows: Row[] = [];
      for (const [i, q] of questions.entries()) {
        const items = await method.run(q, vectors[i]);
        // As the planner judges: the retrieval as a whole, every item carrying the best item's evidence.
        const evidence = judged ? (relevanceEvidence(items, judged) ?? -Infinity) : Number.POSITIVE_INFINITY;
        rows.push({
          answerable: q.pages.length > 0,
          items: items.map((item) => ({ score: evidence, answers: q.pages.includes(pageOf(item)) })),
        });
      }
      const t = judged?.floor ?? -Infinity;
      results.push({
        method: method.name,
        floor: judged?.floor ?? null,
        rates: rates(rows, t),
        unanswerableNothing: nothingRelevant(rows, t, false),
        answerableNothing: nothingRelevant(rows, t, true),
      });
      console.log(JSON.stringify(results.at(-1)));
    }
  } finally {
    await db.drop();
  }
  const command = `node tools/run-ts.js bench/relevance/relevance.bench.ts --distractors ${DISTRACTORS} --top-k ${TOP_K}`;
  const run = {
    date: new Date().toISOString(),
    commit: gitCommit(),
    machine: machine(),
    command,
    pages: corpus.length,
    results,
  };
  writeFileSync(join(__dirname, 'results.json'), `${JSON.stringify(run, null, 2)}\n`);
  writeResultsSection(
    SECTION,
    [
      SECTION,
      '',
      `Command: \`${command}\` (commit ${run.commit}, ${run.date.slice(0, 10)}, ${run.machine.nproc} cores). Embedder \`local-lexical-v1\`, ${corpus.length} pages of the PostgreSQL 15 manual (bench/retrieval's answering pages + ${DISTRACTORS} others), top-K ${TOP_K}.`,
      "Floor = the one relevance judgement of the embedder (ask-contracts `ABSTAIN_RULES`, read through `relevanceFloor` in libs/context-budget/src/relevance.ts, fitted on the fit corpora, this question set among them) on the retrieval's evidence, its best item's idf-weighted coverage of the question (`relevanceEvidence`): below it, every item of the question is low-relevance, else every item is relevant (as the planner applies it); none under the vector method alone. All 151 + 30 questions; nothing is fitted on them here.",
      '',
      '| method | floor | answerable questions keeping an answering chunk as relevant | answering chunks relevant | items of unanswerable questions low-relevance | other items of answerable questions low-relevance | nothing relevant: unanswerable | nothing relevant: answerable (wrongly) |',
      '| --- | --- | --- | --- | --- | --- | --- | --- |',
      ...results.map(
        (r) =>
          `| ${r.method} | ${r.floor === null ? 'none' : r.floor.toFixed(2)} | ${r.rates.recall} | ${r.rates.answeringKept} | ${r.rates.unanswerableDropped} | ${r.rates.otherDropped} | ${r.unanswerableNothing} | ${r.answerableNothing} |`,
      ),
      '',
    ].join('\n'),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
