/**
 * Retrieval on the public documentation corpora (fit and held-out, by `HELD_OUT`), scored through `ask eval`.
 *
 *   node tools/run-ts.js bench/retrieval/heldout.bench.ts [--corpora DIR] [--sets a,b=questions.jsonl]
 *     [--corpus NAME] [--semantic-distractors N] [--runs all,subset,semantic]
 *
 * Each set is a corpus folder `<corpora>/<name>` (default `tmp/corpora`, git-ignored; how to bring
 * each corpus at its commit: bench/retrieval/heldout/README.md) and its question file (default
 * `bench/retrieval/heldout/<name>.jsonl`, `name=FILE` names another, relative to the repo root):
 * `{question, sources}` as `ask eval` reads it, `sources: []` for an unanswerable question, and
 * `nearDomain: true` on the unanswerable ones near the corpus's field. Defaults:
 * `redis-doc,rust-book,prometheus-docs,curl-docs,jekyll-docs,electron-docs`. `--corpus NAME` runs the one set of that name alone
 * and writes its own section ("Retrieval on held-out corpora: NAME") and results file, leaving the
 * section of the full run as it is.
 *
 * Fit and held out: `redis-doc`, `rust-book`, `prometheus-docs` and `curl-docs` are fit corpora (retrieval
 * choices are made on them, with the PostgreSQL manual of bench/retrieval); the corpora of {@link HELD_OUT} are held out of every choice
 * and scored once, at the end. The section marks each row's role and says whether this run is the held-out
 * corpus's first scoring (no row of it in bench/RESULTS.md before) or a scoring again.
 *
 * Per set, in a throwaway database, ingested as the service ingests (IngestionService: 400-token
 * chunks, 60 overlap; no retrieval settings, so the project default: hybrid, the detected language's
 * text search configuration, the embedder's weights), then scored by the `ask eval` CLI as a child
 * process (`apps/ask-cli/src/main.ts eval --json`, the production retrieval path, `RetrievalRepository`,
 * the project's top-K) for `hybrid` (the default), `fulltext` and `vector`:
 *
 * - `local` (lexical) on every page of the corpus;
 * - `local` and `local-semantic` on a bounded subset (the semantic embedder runs at about 3 chunks/s on
 *   2 cores): every answering page plus N others chosen by a hash of their uri (default 20), stated in
 *   the section; the lexical row on the same subset is the like-for-like comparison.
 *
 * Near-domain abstention comes from a second `ask eval` run on the near-domain questions alone.
 * Writes bench/retrieval/heldout-results.json and the section "Retrieval on held-out corpora" of
 * bench/RESULTS.md.
 * @throws Error when a corpus folder or question file is missing (naming it and the README), or when
 *   `ask eval` fails (its stderr).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BENCH_ROOT, gitCommit, machine, numberArg, repoRelative, writeResultsSection, commandLine } from '../common';
import { IngestionService, loadDocuments, type SourceDocument } from '@ask/ingestion';
import {
  closeSemanticEmbeddingPools,
  type EmbeddingProvider,
  LocalEmbeddingProvider,
  LocalSemanticEmbeddingProvider,
} from '@ask/llm-providers';
import { CredentialsCipher, InsightsRepository, KnowledgeRepository, ProjectsRepository } from '@ask/persistence';
import { createTestDatabase } from '@ask/persistence/testing';
import { effectiveRetrieval, type EvalFigures } from '@ask/ask-contracts';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const CORPORA = resolve(BENCH_ROOT, arg('corpora') ?? 'tmp/corpora');
/**
 * Corpora held out of every retrieval choice, scored once at the end (bench/retrieval/heldout/README.md);
 * every other set is a fit corpus. `jekyll-docs` and `electron-docs`: question sets written blind (987815a,
 * e968b48), never ingested or read while the BM25F field weights and the abstain rule were fitted on the five fit corpora
 * (bench/retrieval/fit-fields.ts); `prometheus-docs` and `curl-docs` were scored once, blind, at c16add1 and
 * are fit corpora since.
 */
const HELD_OUT: ReadonlySet<string> = new Set<string>(['jekyll-docs', 'electron-docs']);
const ALL_SETS = (arg('sets') ?? 'redis-doc,rust-book,prometheus-docs,curl-docs,jekyll-docs,electron-docs')
  .split(',')
  .map((s) => {
    const [name, file] = s.split('=');
    return { name, questionsFile: resolve(BENCH_ROOT, file ?? `bench/retrieval/heldout/${name}.jsonl`) };
  });
/** `--corpus NAME`: that set alone (one of the sets above). */
const ONLY = arg('corpus');
const SETS = ONLY ? ALL_SETS.filter((s) => s.name === ONLY) : ALL_SETS;
if (SETS.length === 0)
  throw new Error(
    `--corpus ${ONLY}: not one of the sets ${ALL_SETS.map((s) => s.name).join(', ')} (--sets names others)`,
  );
/** The full run's section, or the one set's own when `--corpus` names it. */
const SECTION = `## Retrieval on held-out corpora${ONLY ? `: ${ONLY}` : ''}`;
const SEMANTIC_DISTRACTORS = numberArg('semantic-distractors', 20, 0);
const METHODS = ['hybrid', 'fulltext', 'vector'] as const;
/** `--runs`: which of the three runs per set (lexical on all pages, lexical on the subset, semantic on the subset). */
const RUNS = (arg('runs') ?? 'all,subset,semantic').split(',');
/** Licence and notes files of a fetched corpus: not pages. */
const NOT_A_PAGE = /(^|\/)(SOURCE|LICENSE[^/]*|COPYRIGHT|COPYING|NOTICE)(\.txt)?$/i;

interface Question {
  question: string;
  sources: string[];
  nearDomain?: boolean;
}

/** One row of the section: `ask eval --json`'s figures of one method, with its corpus and run. */
interface Row extends EvalFigures {
  set: string;
  /** `fit` (choices are made on it) or `held out` ({@link HELD_OUT}). */
  role: 'fit' | 'held out';
  embedder: string;
  pages: number;
  chunks: number;
  nearDomainAbstained: number;
  nearDomain: number;
  textSearchConfig: string;
  /** The project default's hybrid weights, vector / full text (effectiveRetrieval). */
  weights: string;
}

/** Whether a document is one of the expected sources (the rule of `ask eval`'s matchesSource). */
function answers(doc: SourceDocument, expected: string): boolean {
  const last = doc.uri.replace(/#.*$/, '').replace(/^.*\//, '');
  return doc.uri === expected || last === expected || last.replace(/\.[^.]*$/, '') === expected;
}

/** Runs `ask eval --json` on `file` for the project, against the database at `url`. */
function askEval(url: string, projectId: string, file: string): EvalFigures[] {
  const out = execFileSync(
    process.execPath,
    [
      join(BENCH_ROOT, 'tools', 'run-ts.js'),
      join(BENCH_ROOT, 'apps', 'ask-cli', 'src', 'main.ts'),
      'eval',
      '--project',
      projectId,
      '--questions',
      file,
      '--methods',
      METHODS.join(','),
      '--json',
    ],
    { cwd: BENCH_ROOT, env: { ...process.env, DATABASE_URL: url }, encoding: 'utf8', maxBuffer: 16 << 20 },
  );
  return JSON.parse(out) as EvalFigures[];
}

async function main(): Promise<void> {
  const command = `node tools/run-ts.js bench/retrieval/heldout.bench.ts${arg('corpora') ? ` --corpora ${repoRelative(CORPORA)}` : ''}${arg('sets') ? ` --sets ${arg('sets')}` : ''}${ONLY ? ` --corpus ${ONLY}` : ''}${arg('runs') ? ` --runs ${arg('runs')}` : ''} --semantic-distractors ${SEMANTIC_DISTRACTORS}`;
  // Read before this run writes: a held-out corpus with a row in RESULTS.md was scored before.
  const resultsFile = join(BENCH_ROOT, 'bench', 'RESULTS.md');
  const before = existsSync(resultsFile) ? readFileSync(resultsFile, 'utf8') : '';
  const heldOut = SETS.filter((s) => HELD_OUT.has(s.name)).map((s) => s.name);
  const scoredBefore = heldOut.filter((name) => before.includes(`| ${name} | held out |`));
  const tmp = mkdtempSync(join(tmpdir(), 'heldout-'));
  const db = await createTestDatabase();
  const rows: Row[] = [];
  const setNotes: string[] = [];
  try {
    const ds = db.dataSource;
    const projects = new ProjectsRepository(ds, new CredentialsCipher(undefined));
    const ingestion = new IngestionService(new KnowledgeRepository(ds), new InsightsRepository(ds));
    for (const set of SETS) {
      const dir = join(CORPORA, set.name);
      if (!existsSync(dir) || !existsSync(set.questionsFile))
        throw new Error(
          `missing ${existsSync(dir) ? repoRelative(set.questionsFile) : repoRelative(dir)}: bring the corpus as bench/retrieval/heldout/README.md says (or --corpora DIR)`,
        );
      const questions: Question[] = readFileSync(set.questionsFile, 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Question);
      const near = questions.filter((q) => q.sources.length === 0 && q.nearDomain === true);
      const nearFile = join(tmp, `${set.name}-near.jsonl`);
      writeFileSync(nearFile, near.map((q) => JSON.stringify(q)).join('\n'));
      const all = await loadDocuments(dir, { sourceName: set.name, skipFile: (p) => NOT_A_PAGE.test(p) });
      const expected = questions.flatMap((q) => q.sources);
      const answering = all.filter((d) => expected.some((e) => answers(d, e)));
      const hash = (s: string) => createHash('sha256').update(s).digest('hex');
      const others = all.filter((d) => !answering.includes(d)).sort((a, b) => (hash(a.uri) < hash(b.uri) ? -1 : 1));
      const subset = [...answering, ...others.slice(0, SEMANTIC_DISTRACTORS)];
      const a = questions.filter((q) => q.sources.length > 0).length;
      setNotes.push(
        `\`${set.name}\`: ${all.length} pages, ${a} answerable questions and ${questions.length - a} unanswerable (${near.length} near the domain) in ${repoRelative(set.questionsFile)}; the subset: the ${answering.length} answering pages + ${Math.min(SEMANTIC_DISTRACTORS, others.length)} others by hash.`,
      );
      console.log(setNotes[setNotes.length - 1]);
      const runs: Array<{ embedder: EmbeddingProvider; docs: SourceDocument[]; label: string }> = [
        { embedder: new LocalEmbeddingProvider(), docs: all, label: 'all pages' },
        { embedder: new LocalEmbeddingProvider(), docs: subset, label: 'subset' },
        { embedder: new LocalSemanticEmbeddingProvider({ threads: 2 }), docs: subset, label: 'subset' },
      ].filter((_, i) => RUNS.includes(['all', 'subset', 'semantic'][i]));
      for (const run of runs) {
        const project = await projects.create({
          name: `held-out ${set.name} ${run.embedder.provider} ${run.label}`,
          embeddingSettings: {
            provider: run.embedder.provider,
            model: run.embedder.model,
            dimensions: run.embedder.dimensions,
          },
        });
        const started = performance.now();
        const ingested = await ingestion.ingest(project.id, run.docs, run.embedder);
        await new KnowledgeRepository(ds).refreshStatistics();
        console.log(
          `${set.name} ${run.embedder.provider} (${run.label}): ${run.docs.length} pages, ${ingested.chunks} chunks in ${((performance.now() - started) / 1000).toFixed(1)} s`,
        );
        const figures = askEval(db.url, project.id, set.questionsFile);
        const nearFigures = near.length ? askEval(db.url, project.id, nearFile) : [];
        const inForce = await projects.findById(project.id);
        const defaults = effectiveRetrieval(null, {
          embeddingProvider: run.embedder.provider,
          textSearchConfig: inForce?.textSearchConfig ?? 'simple',
        });
        for (const f of figures) {
          const row: Row = {
            ...f,
            set: set.name,
            role: HELD_OUT.has(set.name) ? 'held out' : 'fit',
            embedder: `${run.embedder.provider} (${run.label})`,
            pages: run.docs.length,
            chunks: ingested.chunks,
            nearDomainAbstained: nearFigures.find((n) => n.method === f.method)?.unanswerableAbstained ?? 0,
            nearDomain: near.length,
            textSearchConfig: inForce?.textSearchConfig ?? 'simple',
            weights: `${defaults.vectorWeight} / ${defaults.fulltextWeight}`,
          };
          rows.push(row);
          console.log(JSON.stringify(row));
        }
      }
    }
  } finally {
    await db.drop();
    rmSync(tmp, { recursive: true, force: true });
  }

  const run = { date: new Date().toISOString(), commit: gitCommit(), machine: machine(), command, rows };
  writeFileSync(
    join(__dirname, ONLY ? `heldout-${ONLY}-results.json` : 'heldout-results.json'),
    `${JSON.stringify(run, null, 2)}\n`,
  );
  const fit = SETS.filter((s) => !HELD_OUT.has(s.name)).map((s) => `\`${s.name}\``);
  const roles = [
    fit.length
      ? `Fit corpora (retrieval choices are made on them, with the PostgreSQL manual): ${fit.join(', ')}.`
      : '',
    ...heldOut.map((name) =>
      scoredBefore.includes(name)
        ? `Held out of every choice: \`${name}\`. It had been scored before this run (a row of it was already in this file; its history says when): these figures are a scoring again, not its first.`
        : `Held out of every choice: \`${name}\`, scored once, by this run (its first: no row of it in this file before).`,
    ),
  ].filter((l) => l !== '');
  const pct = (n: number, of: number) => (of ? `${n}/${of} (${Math.round((n / of) * 100)} %)` : '–');
  writeResultsSection(
    SECTION,
    [
      SECTION,
      '',
      commandLine(command, run),
      '',
      'Corpora fetched from public repositories at a fixed commit; question sets written once before any run',
      '(bench/retrieval/heldout/README.md: commits, licences, how the sets were written, how to bring the corpora).',
      ...setNotes.map((n) => `- ${n}`),
      '',
      ...roles,
      '',
      'Each corpus ingested as the service ingests it into a project with no retrieval settings (the project default), then',
      "scored by `ask eval --json` (the retrieval worker's path and top-K). `hybrid` is the default method. Recall@k: share of",
      'answerable questions with an expected page among the first k sources (one per page); MRR over the sources listed;',
      "abstained: the embedder's abstain rule on the items' relevance evidence (ask-contracts `ABSTAIN_RULES`). Near-domain: the",
      'unanswerable questions about a neighbouring product or field (a second `ask eval` run on them alone).',
      '`local` runs on every page and on the subset; `local-semantic` only on the subset (about 3 chunks/s on 2 cores).',
      '',
      '| corpus | role | embedder (pages) | chunks | text search config | method (default weights) | recall@1 | recall@5 | MRR | unanswerable abstained | of which near-domain | answerable wrongly abstained |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      ...rows.map(
        (r) =>
          `| ${r.set} | ${r.role} | ${r.embedder.replace(/\)$/, `, ${r.pages})`)} | ${r.chunks} | ${r.textSearchConfig} | ${r.method === 'hybrid' ? `**hybrid (default, ${r.weights})**` : r.method} | ${r.recallAt1.toFixed(3)} | ${r.recallAt5.toFixed(3)} | ${r.mrr.toFixed(3)} | ${pct(r.unanswerableAbstained, r.unanswerable)} | ${r.nearDomainAbstained}/${r.nearDomain} | ${pct(r.answerableAbstained, r.answerable)} |`,
      ),
      '',
      'Targets of issue 33 on every held-out corpus (default method): recall@5 ≥ 0.75, MRR ≥ 0.55, unanswerable abstained ≥ 80 %,',
      'answerable wrongly abstained ≤ 10 %.',
      '',
    ].join('\n'),
  );
}

// The semantic embedder's worker-thread pools keep the process alive: close them so the bench exits.
main()
  .then(() => closeSemanticEmbeddingPools())
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
