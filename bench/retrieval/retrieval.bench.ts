/**
 * Retrieval quality per method on the PostgreSQL 15 manual (which method and weights to default to).
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
 *   (normalised score fusion over 3 × top-K candidates per leg, `fuseRankings`) at three weightings;
 * - recall@k = share of answerable questions with a chunk of an answering page among the first k;
 *   MRR over the first 10; "abstained" = questions on which the one relevance judgement (ask-contracts
 *   `relevanceJudgement`, `ABSTAIN_RULES`: the rule `ask eval`, the stand-in and the planner's floor
 *   use; none under vector alone) says nothing relevant was found, unanswerable ones and answerable
 *   ones (wrongly) apart;
 * - search time: median and p95 of the database calls per question (the question's embedding
 *   excluded; it is timed separately per embedder).
 *
 * Also measures semantic embedding throughput on 1 and 2 worker threads first. Writes bench/retrieval/results.json and its own two sections of bench/RESULTS.md.
 * @throws Error when the manual is missing (naming the folder and `--data`).
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gitCommit, machine, numberArg, percentile, sharedDataDir, writeResultsSection, commandLine } from '../common';
import { IngestionService, loadDocuments, type SourceDocument } from '@ask/ingestion';
import {
  closeSemanticEmbeddingPools,
  type EmbeddingProvider,
  LocalEmbeddingProvider,
  LocalSemanticEmbeddingProvider,
} from '@ask/llm-providers';
import {
  effectiveRetrieval,
  relevanceJudgement,
  type RetrievalMethod,
  type RetrievedItem,
  type TextSearchConfig,
} from '@ask/ask-contracts';
import {
  CredentialsCipher,
  InsightsRepository,
  KnowledgeRepository,
  ProjectsRepository,
  RetrievalRepository,
} from '@ask/persistence';
import { createTestDatabase } from '@ask/persistence/testing';

const SECTION = '## Retrieval quality on the PostgreSQL manual';
const THROUGHPUT_SECTION = '## Semantic ingestion throughput';
const TOP_K = 10;
const dataArg = process.argv.indexOf('--data');
const DATA = dataArg >= 0 ? resolve(process.argv[dataArg + 1]) : sharedDataDir(['kb-postgresql-15-docs']);
const DISTRACTORS = numberArg('distractors', 250, 0);
/** `--questions N`: only the first N answerable and first N unanswerable questions (bench:verify's small run); all by default. */
const QUESTION_LIMIT = numberArg('questions', Number.MAX_SAFE_INTEGER);

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
  /** Unanswerable questions judged "nothing relevant", and answerable ones (wrongly), as `n/m`; null without a rule. */
  abstained: { unanswerable: string; answerable: string } | null;
  searchMedianMs: number;
  searchP95Ms: number;
}

/** The manual page id of a chunk's source uri (`…/html/routine-vacuuming.html` → `routine-vacuuming`). */
function pageOf(item: RetrievedItem): string {
  return (item.source ?? '')
    .replace(/^.*\//, '')
    .replace(/\.html$/, '')
    .replace(/^.*#/, '');
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
    .map((l) => JSON.parse(l) as Question)
    .filter(
      (q, i, all) => all.slice(0, i).filter((o) => o.pages.length > 0 === q.pages.length > 0).length < QUESTION_LIMIT,
    );
  const answerable = questions.filter((q) => q.pages.length > 0);
  const unanswerable = questions.filter((q) => q.pages.length === 0);
  const all = await loadDocuments(join(DATA, 'kb-postgresql-15-docs'), { sourceName: 'postgresql-15' });
  const idOf = (doc: SourceDocument) => doc.uri.replace(/^.*\//, '').replace(/\.html$/, '');
  const needed = new Set(answerable.flatMap((q) => q.pages));
  const hash = (s: string) => createHash('sha256').update(s).digest('hex');
  const others = all.filter((d) => !needed.has(idOf(d))).sort((a, b) => (hash(idOf(a)) < hash(idOf(b)) ? -1 : 1));
  const corpus = [...all.filter((d) => needed.has(idOf(d))), ...others.slice(0, DISTRACTORS)];
  // How much the questions reuse their pages' key words: the share of answerable questions that share
  // no content word (lower-cased, at least 4 letters, crude plural stem) with any answering page's title.
  const words = (text: string) =>
    new Set((text.toLowerCase().match(/[a-z][a-z_]{3,}/g) ?? []).map((w) => w.replace(/s$/, '')));
  const titleOf = new Map(all.map((d) => [idOf(d), d.title ?? '']));
  const noTitleWord = answerable.filter((q) => {
    const title = new Set(q.pages.flatMap((p) => [...words(titleOf.get(p) ?? '')]));
    return ![...words(q.question)].some((w) => title.has(w));
  }).length;
  console.log(
    `corpus: ${corpus.length} pages (${needed.size} answering, ${Math.min(DISTRACTORS, others.length)} others) of ${all.length}`,
  );

  const throughput = await semanticThroughput(corpus);
  const db = await createTestDatabase();
  const results: MethodResult[] = [];
  /** Per embedder model: each question's best item score under the project default method (as the stand-in's prompt shows it, before rounding). */
  const embedding: Record<string, { ingestSeconds: number; chunks: number; embedMedianMs: number }> = {};
  /** Per embedder provider: the text search configuration in force after ingestion (detected language). */
  const configInForce: Record<string, string> = {};
  try {
    const ds = db.dataSource;
    const projects = new ProjectsRepository(ds, new CredentialsCipher(undefined));
    const ingestion = new IngestionService(new KnowledgeRepository(ds), new InsightsRepository(ds));
    const retrieval = new RetrievalRepository(ds);
    // The semantic embedder on 2 worker threads, as the ingestion worker runs it (INGESTION_EMBEDDING_THREADS).
    const embedders: EmbeddingProvider[] = [
      new LocalEmbeddingProvider(),
      new LocalSemanticEmbeddingProvider({ threads: 2 }),
    ];
    for (const embedder of embedders) {
      const project = await projects.create({
        name: `retrieval bench: ${embedder.provider}`,
        embeddingSettings: { provider: embedder.provider, model: embedder.model, dimensions: embedder.dimensions },
        // No retrieval settings: the project default, whose text search configuration follows the detected language.
      });
      const started = performance.now();
      const ingested = await ingestion.ingest(project.id, corpus, embedder, {
        onProgress: (p) =>
          p.done % 50 === 0 && console.log(`  ${embedder.provider}: ${p.done}/${p.total} pages, ${p.chunks} chunks`),
      });
      await new KnowledgeRepository(ds).refreshStatistics();
      const ingestSeconds = (performance.now() - started) / 1000;
      const inForce: TextSearchConfig = (await projects.findById(project.id))?.textSearchConfig ?? 'simple';
      console.log(
        `${embedder.provider}: ${ingested.chunks} chunks in ${ingestSeconds.toFixed(1)} s; text search configuration in force: ${inForce}`,
      );
      configInForce[embedder.provider] = inForce;

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
        embedMedianMs: round(
          percentile(
            embedTimes.sort((a, b) => a - b),
            50,
          ),
          1,
        ),
      };

      // What the retrieval worker does for a project that sets nothing (effectiveRetrieval).
      const weights = effectiveRetrieval(null, { embeddingProvider: embedder.provider, textSearchConfig: inForce });
      const defaultName = `hybrid ${embedder.model} + ${inForce} (detected), weights ${weights.vectorWeight} / ${weights.fulltextWeight} (project default)`;
      /** `config`: the text search configuration set explicitly for the method; `default`: none (the detected language's). */
      const methods: Array<{
        name: string;
        kind: RetrievalMethod;
        config?: 'simple' | 'english' | 'default';
        run: (q: Question, v: number[]) => Promise<RetrievedItem[]>;
      }> = [
        {
          name: defaultName,
          kind: 'hybrid',
          config: 'default',
          run: (q, v) =>
            retrieval.searchHybrid(project.id, q.question, v, TOP_K, model, {
              vector: weights.vectorWeight,
              fulltext: weights.fulltextWeight,
            }),
        },
        {
          name: `vector (${embedder.model})`,
          kind: 'vector',
          run: (_q, v) => retrieval.search(project.id, v, TOP_K, model),
        },
      ];
      if (embedder.provider === 'local') {
        methods.push(
          {
            name: 'full text (simple)',
            kind: 'fulltext',
            config: 'simple',
            run: (q, v) => retrieval.searchFullText(project.id, q.question, v, TOP_K, model),
          },
          {
            name: 'full text (english)',
            kind: 'fulltext',
            config: 'english',
            run: (q, v) => retrieval.searchFullText(project.id, q.question, v, TOP_K, model),
          },
        );
      }
      for (const [vector, fulltext] of [
        [1, 1],
        [1, 0.5],
        [0.5, 1],
      ] as const) {
        methods.push({
          name: `hybrid ${embedder.model} + english, weights ${vector} / ${fulltext}`,
          kind: 'hybrid',
          config: 'english',
          run: (q, v) => retrieval.searchHybrid(project.id, q.question, v, TOP_K, model, { vector, fulltext }),
        });
      }
      for (const [vector, fulltext] of [
        [0.5, 1],
        [1, 1],
      ] as const) {
        methods.push({
          name: `hybrid ${embedder.model} + simple, weights ${vector} / ${fulltext}`,
          kind: 'hybrid',
          config: 'simple',
          run: (q, v) => retrieval.searchHybrid(project.id, q.question, v, TOP_K, model, { vector, fulltext }),
        });
      }
      let config = 'default';
      for (const method of methods) {
        if (method.config && method.config !== config) {
          await projects.updateSettings(project.id, {
            retrievalSettings: method.config === 'default' ? null : { textSearchConfig: method.config },
          });
          config = method.config;
        }
        const ranks: Array<number | null> = [];
        const judged = { answerable: 0, unanswerable: 0, ruled: false };
        const times: number[] = [];
        for (let i = 0; i < questions.length; i++) {
          const q = questions[i];
          const t = performance.now();
          const items = await method.run(q, vectors[i]);
          times.push(performance.now() - t);
          const judgement = relevanceJudgement(items, embedder.model, method.kind);
          judged.ruled = judgement !== undefined;
          if (q.pages.length) {
            ranks.push(rankOfAnswer(items, q.pages));
            if (judgement?.nothingRelevant) judged.answerable++;
          } else if (judgement?.nothingRelevant) judged.unanswerable++;
        }
        const within = (k: number) => ranks.filter((r) => r !== null && r <= k).length / answerable.length;
        times.sort((a, b) => a - b);
        results.push({
          method: method.name,
          recallAt1: round(within(1)),
          recallAt5: round(within(5)),
          recallAt10: round(within(10)),
          mrr: round(ranks.reduce<number>((sum, r) => sum + (r === null ? 0 : 1 / r), 0) / answerable.length),
          abstained: judged.ruled
            ? {
                unanswerable: `${judged.unanswerable}/${unanswerable.length}`,
                answerable: `${judged.answerable}/${answerable.length}`,
              }
            : null,
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
  const run = {
    date: new Date().toISOString(),
    commit: gitCommit(),
    machine: machine(),
    command,
    pages: corpus.length,
    embedding,
    results,
    throughput,
  };
  writeFileSync(join(__dirname, 'results.json'), `${JSON.stringify(run, null, 2)}\n`);
  const best = [...results].sort((a, b) => b.recallAt5 - a.recallAt5 || b.mrr - a.mrr)[0];
  const rows = results.map(
    (r) =>
      `| ${r.method} | ${r.recallAt1} | ${r.recallAt5} | ${r.recallAt10} | ${r.mrr} | ${r.abstained?.unanswerable ?? '–'} | ${r.abstained?.answerable ?? '–'} | ${r.searchMedianMs} | ${r.searchP95Ms} |`,
  );
  writeResultsSection(
    SECTION,
    [
      SECTION,
      '',
      commandLine(command, run),
      '',
      `${answerable.length} answerable questions and ${unanswerable.length} that the manual does not answer (bench/retrieval/questions.jsonl),`,
      `over ${corpus.length} pages of the manual: every answering page plus ${Math.min(DISTRACTORS, corpus.length)} others chosen by hash.`,
      `${noTitleWord} of ${answerable.length} answerable questions share no word of 4+ letters with their answering page's title (paraphrase; see bench/retrieval/README.md for how the set was made and checked).`,
      `Chunks: ${Object.entries(embedding)
        .map(
          ([p, e]) =>
            `${p} ${e.chunks} (ingested in ${e.ingestSeconds} s, question embedded in ${e.embedMedianMs} ms median)`,
        )
        .join('; ')}.`,
      'Recall@k: share of answerable questions with a chunk of an answering page in the first k (top-K 10); MRR over the first 10.',
      '"Abstained": questions on which the one relevance judgement of the embedder (ask-contracts `ABSTAIN_RULES`: no item\'s idf-weighted',
      "coverage of the question reaches the rule's threshold; the rule `ask eval`, the stand-in's abstain and the planner's floor use) says",
      'nothing relevant was found: unanswerable ones, and answerable ones (wrongly); – under vector alone (no full-text evidence: never',
      'abstains). This question set is one of the fit sets of that rule. Search: database time per question, ms.',
      '',
      '| method | recall@1 | recall@5 | recall@10 | MRR | unanswerable abstained | answerable wrongly abstained | search median | search p95 |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      ...rows,
      '',
      `Best by recall@5 on this run: **${best.method}**. Project default (a project that sets no retrieval settings: hybrid, the text search configuration of the`,
      `language detected in its knowledge, the embedder's weights): ${results
        .filter((r) => r.method.endsWith('(project default)'))
        .map((r) => `**${r.method}**, recall@5 ${r.recallAt5}, MRR ${r.mrr}`)
        .join('; ')}. Configuration in force after ingestion: ${Object.entries(configInForce)
        .map(([p, c]) => `${p} ${c}`)
        .join(', ')}.`,
      '',
    ].join('\n'),
  );
  writeResultsSection(
    THROUGHPUT_SECTION,
    [
      THROUGHPUT_SECTION,
      '',
      commandLine(command, run, ', before the quality run'),
      '',
      `The same ${throughput.pieces} pieces of the corpus (${throughput.pieceCharacters} characters each, about one 400-token chunk) embedded by`,
      '`local-semantic` on the calling thread and on a pool of worker threads (`LocalSemanticEmbeddingProvider({ threads })`,',
      "the ingestion worker's `INGESTION_EMBEDDING_THREADS`, default 2), each after a warm-up call that loads the model(s).",
      'The machine is shared: a 1-minute load average above 2 means other work took cores too.',
      '',
      '| threads | seconds | chunks/s | load average (1 min) |',
      '| --- | --- | --- | --- |',
      ...throughput.runs.map((r) => `| ${r.threads} | ${r.seconds} | ${r.chunksPerSecond} | ${r.loadAverage1m} |`),
      '',
      `Speed-up with 2 threads: ${round(throughput.runs[1].chunksPerSecond / throughput.runs[0].chunksPerSecond, 2)}×.`,
      '',
    ].join('\n'),
  );
}

/** Pieces of this many characters (about one 400-token chunk of English prose) for the throughput run. */
const PIECE_CHARACTERS = 1_600;
const PIECES = numberArg('pieces', 240);

/**
 * Semantic embedding throughput in this process: the same 240 pieces of the corpus (1,600 characters
 * each, about one chunk) embedded by `local-semantic` on the calling thread, then on a pool of 2
 * worker threads, each after a warm-up call that loads the model(s); chunks/s and the 1-minute load average.
 */
async function semanticThroughput(corpus: SourceDocument[]) {
  const pieces: string[] = [];
  for (const doc of corpus) {
    for (let at = 0; at + PIECE_CHARACTERS <= doc.text.length && pieces.length < PIECES; at += PIECE_CHARACTERS)
      pieces.push(doc.text.slice(at, at + PIECE_CHARACTERS));
    if (pieces.length === PIECES) break;
  }
  const out: Array<{ threads: number; seconds: number; chunksPerSecond: number; loadAverage1m: number }> = [];
  for (const threads of [1, 2]) {
    const embedder = new LocalSemanticEmbeddingProvider({ threads });
    await embedder.embed(pieces.slice(0, 16));
    const load = loadavg()[0];
    const started = performance.now();
    await embedder.embed(pieces);
    const seconds = (performance.now() - started) / 1000;
    out.push({
      threads,
      seconds: round(seconds, 1),
      chunksPerSecond: round(pieces.length / seconds, 2),
      loadAverage1m: round(load, 1),
    });
    console.log(JSON.stringify(out[out.length - 1]));
  }
  return { pieces: pieces.length, pieceCharacters: PIECE_CHARACTERS, runs: out };
}

// The semantic embedder's worker-thread pools keep the process alive: close them, or the bench never
// exits (bench:verify then waits for its 20-minute timeout).
main()
  .then(() => closeSemanticEmbeddingPools())
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
