/**
 * Retrieval quality per method on the PostgreSQL 15 manual (issue 15, item 3).
 *
 *   node tools/run-ts.js bench/retrieval/retrieval.bench.ts [--distractors N] [--data DIR]
 *
 * The question set is bench/retrieval/questions.jsonl: 151 questions, each with the manual page(s)
 * that answer it (page id = the HTML file name), and 30 questions the manual does not answer
 * (`pages: []`). The corpus is every answering page plus N other pages of the manual (default 250,
 * chosen by a hash of their id, so the same on every run; `--distractors 2000` takes the whole
 * manual), ingested as the service does (400-token chunks, 60 overlap) into a throwaway database,
 * once with the lexical `local` embedder and once with the semantic `local-semantic` one. Each
 * question is searched as the retrieval worker searches it (`RetrievalRepository`, top-K 10):
 *
 * - vector legs alone, full text alone (`simple` and `english` configurations), and hybrid
 *   (weighted reciprocal rank fusion) at three weightings;
 * - recall@k = share of answerable questions with a chunk of an answering page among the first k;
 *   MRR over the first 10; "abstains" = share of unanswerable questions whose best cosine score is
 *   below the threshold that keeps 90% of answerable questions above it (fitted on this same set:
 *   a measure of separation, not a held-out figure);
 * - search time: median and p95 of the database calls per question (the question's embedding
 *   excluded; it is timed separately per embedder).
 *
 * Writes bench/retrieval/results.json and its own section of bench/RESULTS.md.
 * @throws Error when the manual is missing (naming the folder and `--data`).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gitCommit, machine, numberArg, percentile, sharedDataDir, writeResultsSection } from '../common';
import { IngestionService, loadDocuments, type SourceDocument } from '@ask/ingestion';
import { type EmbeddingProvider, LocalEmbeddingProvider, LocalSemanticEmbeddingProvider } from '@ask/llm-providers';
import type { RetrievedItem } from '@ask/ask-contracts';
import { CredentialsCipher, InsightsRepository, KnowledgeRepository, ProjectsRepository, RetrievalRepository } from '@ask/persistence';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { createTestDatabase } from '@ask/persistence/testing';

const SECTION = '## Retrieval quality on the PostgreSQL manual';
const TOP_K = 10;
const dataArg = process.argv.indexOf('--data');
const DATA = dataArg >= 0 ? resolve(process.argv[dataArg + 1]) : sharedDataDir(['kb-postgresql-15-docs']);
const DISTRACTORS = numberArg('distractors', 250, 0);

interface Question {
  question: string;
  pages: string[];
}

interface MethodResult {
  method: string;
  recallAt1: number;
  recallAt5: number;
  recallAt10: number;
  mrr: number;
  abstains: number | null;
  searchMedianMs: number;
  searchP95Ms: number;
}

/** The manual page id of a chunk's source uri (`…/html/routine-vacuuming.html` → `routine-vacuuming`). */
function pageOf(item: RetrievedItem): string {
  return (item.source ?? '').replace(/^.*\//, '').replace(/\.html$/, '').replace(/^.*#/, '');
}

function rankOfAnswer(items: RetrievedItem[], pages: string[]): number | null {
  const i = items.findIndex((item) => pages.includes(pageOf(item)));
  return i < 0 ? null : i + 1;
}

const round = (x: number, places = 3) => Math.round(x * 10 ** places) / 10 ** places;

async function main(): Promise<void> {
  const questions: Question[] = readFileSync(join(__dirname, 'questions.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
  const answerable = questions.filter((q) => q.pages.length > 0);
  const unanswerable = questions.filter((q) => q.pages.length === 0);
  const all = await loadDocuments(join(DATA, 'kb-postgresql-15-docs'), { sourceName: 'postgresql-15' });
  const idOf = (doc: SourceDocument) => doc.uri.replace(/^.*\//, '').replace(/\.html$/, '');
  const needed = new Set(answerable.flatMap((q) => q.pages));
  const hash = (s: string) => createHash('sha256').update(s).digest('hex');
  const others = all.filter((d) => !needed.has(idOf(d))).sort((a, b) => (hash(idOf(a)) < hash(idOf(b)) ? -1 : 1));
  const corpus = [...all.filter((d) => needed.has(idOf(d))), ...others.slice(0, DISTRACTORS)];
  console.log(`corpus: ${corpus.length} pages (${needed.size} answering, ${Math.min(DISTRACTORS, others.length)} others) of ${all.length}`);

  const db = await createTestDatabase();
  const results: MethodResult[] = [];
  const embedding: Record<string, { ingestSeconds: number; chunks: number; embedMedianMs: number }> = {};
  try {
    const ds = db.dataSource;
    const projects = new ProjectsRepository(ds, new CredentialsCipher(undefined));
    const ingestion = new IngestionService(new KnowledgeRepository(ds), new InsightsRepository(ds));
    const retrieval = new RetrievalRepository(ds);
    const embedders: EmbeddingProvider[] = [new LocalEmbeddingProvider(), new LocalSemanticEmbeddingProvider()];
    for (const embedder of embedders) {
      const project = await projects.create({
        name: `retrieval bench: ${embedder.provider}`,
        embeddingSettings: { provider: embedder.provider, model: embedder.model, dimensions: embedder.dimensions },
        retrievalSettings: { textSearchConfig: 'english' },
      });
      const started = performance.now();
      const ingested = await ingestion.ingest(project.id, corpus, embedder, {
        onProgress: (p) => p.done % 50 === 0 && console.log(`  ${embedder.provider}: ${p.done}/${p.total} pages, ${p.chunks} chunks`),
      });
      await new KnowledgeRepository(ds).refreshStatistics();
      const ingestSeconds = (performance.now() - started) / 1000;
      console.log(`${embedder.provider}: ${ingested.chunks} chunks in ${ingestSeconds.toFixed(1)} s`);

      const model = `${embedder.provider}/${embedder.model}`;
      const vectors: number[][] = [];
      const embedTimes: number[] = [];
      for (const q of questions) {
        const t = performance.now();
        vectors.push((await embedder.embed([q.question]))[0]);
        embedTimes.push(performance.now() - t);
      }
      embedding[embedder.provider] = {
        ingestSeconds: round(ingestSeconds, 1),
        chunks: ingested.chunks,
        embedMedianMs: round(percentile(embedTimes.sort((a, b) => a - b), 50), 1),
      };

      const methods: Array<{ name: string; config?: 'simple' | 'english'; run: (q: Question, v: number[]) => Promise<RetrievedItem[]> }> = [
        { name: `vector (${embedder.model})`, run: (_q, v) => retrieval.search(project.id, v, TOP_K, model) },
      ];
      if (embedder.provider === 'local') {
        methods.push(
          { name: 'full text (simple)', config: 'simple', run: (q, v) => retrieval.searchFullText(project.id, q.question, v, TOP_K, model) },
          { name: 'full text (english)', config: 'english', run: (q, v) => retrieval.searchFullText(project.id, q.question, v, TOP_K, model) },
        );
      }
      for (const [vector, fulltext] of [
        [1, 1],
        [1, 0.5],
        [0.5, 1],
      ] as const) {
        methods.push({
          name: `hybrid ${embedder.model} + english, weights ${vector} / ${fulltext}`,
          config: 'english',
          run: (q, v) => retrieval.searchHybrid(project.id, q.question, v, TOP_K, model, { vector, fulltext }),
        });
      }
      let config = 'english';
      for (const method of methods) {
        if (method.config && method.config !== config) {
          await projects.updateSettings(project.id, { retrievalSettings: { textSearchConfig: method.config } });
          config = method.config;
        }
        const ranks: Array<number | null> = [];
        const best = { answerable: [] as number[], unanswerable: [] as number[] };
        const times: number[] = [];
        for (let i = 0; i < questions.length; i++) {
          const q = questions[i];
          const t = performance.now();
          const items = await method.run(q, vectors[i]);
          times.push(performance.now() - t);
          const top = items.length ? Math.max(...items.map((item) => item.score)) : -1;
          if (q.pages.length) {
            ranks.push(rankOfAnswer(items, q.pages));
            best.answerable.push(top);
          } else best.unanswerable.push(top);
        }
        const within = (k: number) => ranks.filter((r) => r !== null && r <= k).length / answerable.length;
        const threshold = percentile([...best.answerable].sort((a, b) => a - b), 10);
        times.sort((a, b) => a - b);
        results.push({
          method: method.name,
          recallAt1: round(within(1)),
          recallAt5: round(within(5)),
          recallAt10: round(within(10)),
          mrr: round(ranks.reduce<number>((sum, r) => sum + (r === null ? 0 : 1 / r), 0) / answerable.length),
          abstains: unanswerable.length ? round(best.unanswerable.filter((b) => b < threshold).length / unanswerable.length) : null,
          searchMedianMs: round(percentile(times, 50), 2),
          searchP95Ms: round(percentile(times, 95), 2),
        });
        console.log(JSON.stringify(results[results.length - 1]));
      }
    }
  } finally {
    await db.drop();
  }

  const command = `node tools/run-ts.js bench/retrieval/retrieval.bench.ts --distractors ${DISTRACTORS}`;
  const run = { date: new Date().toISOString(), commit: gitCommit(), machine: machine(), command, pages: corpus.length, embedding, results };
  writeFileSync(join(__dirname, 'results.json'), `${JSON.stringify(run, null, 2)}\n`);
  const best = [...results].sort((a, b) => b.recallAt5 - a.recallAt5 || b.mrr - a.mrr)[0];
  const rows = results.map(
    (r) =>
      `| ${r.method} | ${r.recallAt1} | ${r.recallAt5} | ${r.recallAt10} | ${r.mrr} | ${r.abstains ?? '–'} | ${r.searchMedianMs} | ${r.searchP95Ms} |`,
  );
  writeResultsSection(
    SECTION,
    [
      SECTION,
      '',
      `Command: \`${command}\` (commit ${run.commit}, ${run.date.slice(0, 10)}, ${run.machine.nproc} cores, Node ${run.machine.node}).`,
      '',
      `${answerable.length} answerable questions and ${unanswerable.length} that the manual does not answer (bench/retrieval/questions.jsonl),`,
      `over ${corpus.length} pages of the manual: every answering page plus ${Math.min(DISTRACTORS, corpus.length)} others chosen by hash.`,
      `Chunks: ${Object.entries(embedding).map(([p, e]) => `${p} ${e.chunks} (ingested in ${e.ingestSeconds} s, question embedded in ${e.embedMedianMs} ms median)`).join('; ')}.`,
      'Recall@k: share of answerable questions with a chunk of an answering page in the first k (top-K 10); MRR over the first 10.',
      '"Abstains": share of unanswerable questions whose best cosine score is below the score that 90% of answerable questions reach',
      '(fitted on this same set, so a measure of separation, not a held-out figure). Search: database time per question, ms.',
      '',
      '| method | recall@1 | recall@5 | recall@10 | MRR | abstains | search median | search p95 |',
      '| --- | --- | --- | --- | --- | --- | --- | --- |',
      ...rows,
      '',
      `Best by recall@5 on this run: **${best.method}**.`,
      '',
    ].join('\n'),
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
