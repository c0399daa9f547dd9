import { Presets, SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import {
  citedSources,
  effectiveRetrieval,
  type EvalFigures,
  RETRIEVAL_METHODS,
  type RetrievalMethod,
  type RetrievedItem,
  relevanceEvidence,
  relevanceRule,
} from '@ask/ask-contracts';
import { ambientCredentialsAllowed, loadConfig } from '@ask/config';
import { createEmbeddingProvider, egressPolicyFor } from '@ask/llm-providers';
import { type FieldWeights, type ProjectsRepository, RetrievalRepository } from '@ask/persistence';
import type { DataSource } from 'typeorm';
import { withDatabase } from './db';

/** One line of an eval question file: the question and the source ids that answer it (`[]`: none does). */
export interface EvalQuestion {
  question: string;
  sources: string[];
}

/**
 * Parses a question file: JSONL, one `{"question": "...", "sources": ["id", ...]}` per line (blank
 * lines skipped), `sources: []` for a question the knowledge does not answer.
 * @throws Error naming the line for a line that is not such an object.
 */
export function parseQuestionFile(text: string): EvalQuestion[] {
  const out: EvalQuestion[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch (err) {
      throw new Error(`line ${i + 1}: not JSON (${(err as Error).message})`);
    }
    const q = row as Partial<EvalQuestion>;
    if (
      typeof q?.question !== 'string' ||
      !Array.isArray(q.sources) ||
      !q.sources.every((s) => typeof s === 'string')
    ) {
      throw new Error(`line ${i + 1}: expected {"question": string, "sources": string[]}`);
    }
    out.push({ question: q.question, sources: q.sources });
  });
  return out;
}

/**
 * Whether a retrieved source matches an expected source id: the id equals the item's `source` (its
 * knowledge source uri), that uri's last path segment, or that segment without its extension and
 * `#fragment` (so `routine-vacuuming` names `…/html/routine-vacuuming.html`, `README.md` or
 * `README` names `kb-pgvector/README.md`), or the item's own id (an insight or recommendation).
 */
export function matchesSource(item: { id: string; source?: string }, expected: string): boolean {
  if (item.id === expected) return true;
  if (item.source === undefined) return false;
  const last = item.source.replace(/#.*$/, '').replace(/^.*\//, '');
  return item.source === expected || last === expected || last.replace(/\.[^.]*$/, '') === expected;
}

/**
 * The figures of one method from each question's ranked sources (one per page, best first) and
 * relevance evidence (`relevanceEvidence`, null when nothing was retrieved): recall@1/@5 and MRR
 * (over the whole list) on the answerable questions; abstention = evidence below `abstainBelow` (or
 * nothing retrieved), the embedder's `ABSTAIN_RULES`; none when null.
 */
export function evalFigures(
  method: RetrievalMethod,
  questions: readonly EvalQuestion[],
  ranked: ReadonlyArray<{ sources: ReadonlyArray<{ id: string; source?: string }>; best: number | null }>,
  abstainBelow: number | null,
  perQuestion = false,
): EvalFigures {
  const evidence: NonNullable<EvalFigures['questions']> = [];
  let answerable = 0;
  let at1 = 0;
  let at5 = 0;
  let rr = 0;
  let unanswerableAbstained = 0;
  let answerableAbstained = 0;
  questions.forEach((q, i) => {
    const { sources, best } = ranked[i];
    const abstains = abstainBelow !== null && (best === null || best < abstainBelow);
    const rank = sources.findIndex((s) => q.sources.some((e) => matchesSource(s, e))) + 1;
    if (perQuestion) {
      evidence.push({
        answerable: q.sources.length > 0,
        rank: rank >= 1 ? rank : null,
        evidence: best === null || Number.isFinite(best) ? best : null,
        abstained: abstains,
      });
    }
    if (q.sources.length === 0) {
      if (abstains) unanswerableAbstained++;
      return;
    }
    answerable++;
    if (abstains) answerableAbstained++;
    if (rank === 1) at1++;
    if (rank >= 1 && rank <= 5) at5++;
    if (rank >= 1) rr += 1 / rank;
  });
  const share = (n: number) => (answerable ? Math.round((n / answerable) * 1000) / 1000 : 0);
  return {
    method,
    answerable,
    unanswerable: questions.length - answerable,
    recallAt1: share(at1),
    recallAt5: share(at5),
    mrr: share(rr),
    unanswerableAbstained,
    answerableAbstained,
    abstainBelow,
    ...(perQuestion ? { questions: evidence } : {}),
  };
}

/** Options of {@link evaluateProject}. */
export interface EvaluateOptions {
  /** Items retrieved per question; default the project's top-K. */
  topK?: number;
  /** Draw a progress bar (questions done of questions × methods) on `stream` (default stderr). */
  progress?: boolean;
  stream?: Writable;
  /** Each question's evidence in the figures (`EvalFigures.questions`, `--per-question`); default off. */
  perQuestion?: boolean;
  /** BM25F title and section weights of the full-text leg (`--field-weights`); default the service's. */
  fieldWeights?: FieldWeights;
}

/**
 * Evaluates a project's retrieval on a question file, per method, as the retrieval worker retrieves:
 * the question embedded by the project's embedder, `vector` / `fulltext` / `hybrid` through
 * RetrievalRepository with the project's top-K, text search configuration in force and hybrid
 * weights (its settings, else the embedder's defaults); the sources list as an answer shows it
 * (one per page, `citedSources`); abstention by the abstain rule of the project's embedding model
 * on the items' relevance evidence (`relevanceRule`, `relevanceEvidence`: the judgement the stand-in
 * and the planner's floor use; an embedder without a rule, or the vector method alone, never abstains).
 * @throws Error when the project does not exist or has no embedding provider; the embedder's errors.
 */
export async function evaluateProject(
  ds: DataSource,
  projects: ProjectsRepository,
  projectId: string,
  questions: readonly EvalQuestion[],
  methods: readonly RetrievalMethod[],
  options: EvaluateOptions = {},
): Promise<EvalFigures[]> {
  const project = await projects.findById(projectId);
  if (!project) throw new Error(`project ${projectId} not found`);
  if (!project.embeddingSettings) throw new Error(`project ${projectId} has no embedding provider`);
  const config = loadConfig();
  const embedder = createEmbeddingProvider(
    project.embeddingSettings,
    (await projects.getCredentials(projectId)) ?? {},
    {
      egress: egressPolicyFor(config),
      ambientCredentials: ambientCredentialsAllowed(config, projectId),
    },
  );
  const model = `${embedder.provider}/${embedder.model}`;
  const settings = effectiveRetrieval(project.retrievalSettings, {
    embeddingProvider: project.embeddingSettings.provider,
    textSearchConfig: project.textSearchConfig,
  });
  const topK = options.topK ?? project.topK;
  const retrieval = new RetrievalRepository(ds);
  const bar = options.progress
    ? new SingleBar(
        {
          format: 'eval {bar} {value}/{total} searches | {method}',
          hideCursor: true,
          ...(options.stream ? { stream: options.stream, noTTYOutput: true, notTTYSchedule: 0 } : {}),
        },
        Presets.shades_classic,
      )
    : undefined;
  bar?.start(questions.length * methods.length, 0, { method: methods[0] ?? '' });
  try {
    const vectors: number[][] = [];
    for (const q of questions) vectors.push((await embedder.embed([q.question]))[0]);
    const out: EvalFigures[] = [];
    for (const method of methods) {
      // The one relevance judgement (the stand-in's abstain and the planner's floor use it too); none under `vector`.
      const rule = relevanceRule(embedder.model, method);
      const ranked: Array<{ sources: ReturnType<typeof citedSources>; best: number | null }> = [];
      for (let i = 0; i < questions.length; i++) {
        const question = questions[i].question;
        const v = vectors[i];
        let items: RetrievedItem[];
        if (method === 'vector') items = await retrieval.search(projectId, v, topK, model);
        else if (method === 'fulltext')
          items = await retrieval.searchFullText(projectId, question, v, topK, model, options.fieldWeights);
        else
          items = await retrieval.searchHybrid(
            projectId,
            question,
            v,
            topK,
            model,
            { vector: settings.vectorWeight, fulltext: settings.fulltextWeight },
            options.fieldWeights,
          );
        ranked.push({
          sources: citedSources(items),
          best: relevanceEvidence(items, rule ?? { cosineWeight: 0 }),
        });
        bar?.increment(1, { method });
      }
      out.push(evalFigures(method, questions, ranked, rule?.below ?? null, options.perQuestion));
    }
    return out;
  } finally {
    bar?.stop();
  }
}

/** The figures as an aligned text table, one row per method. */
export function formatEval(figures: readonly EvalFigures[]): string {
  const head = ['method', 'recall@1', 'recall@5', 'MRR', 'unanswerable abstained', 'answerable wrongly abstained'];
  const rows = figures.map((f) => [
    f.method,
    f.recallAt1.toFixed(3),
    f.recallAt5.toFixed(3),
    f.mrr.toFixed(3),
    `${f.unanswerableAbstained}/${f.unanswerable}`,
    `${f.answerableAbstained}/${f.answerable}`,
  ]);
  const all = [head, ...rows];
  const widths = head.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const lines = all.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '));
  const threshold = figures.find((f) => f.abstainBelow !== null)?.abstainBelow;
  const note =
    threshold === null || threshold === undefined
      ? "abstention: the project's embedder has no calibrated threshold (never abstains)"
      : `abstention: relevance evidence (best coverage + weight × best cosine) below ${threshold} (the embedder's abstain rule)`;
  return `${lines.join('\n')}\n${note}\n`;
}

/**
 * `ask eval --project ID --questions FILE [--methods vector,fulltext,hybrid] [--top-k N] [--json]
 * [--per-question] [--field-weights TITLE,SECTION]`, in-process.
 */
export function registerEvalCommand(program: Command): void {
  program
    .command('eval')
    .description(
      "score a project's retrieval on your question file (JSONL {question, sources}): recall@1/@5, MRR, abstention",
    )
    .requiredOption('--project <id>', 'project id')
    .requiredOption(
      '--questions <file>',
      'JSONL: {"question": "...", "sources": ["source id", ...]} ([] = unanswerable)',
    )
    .option('--methods <list>', 'comma-separated retrieval methods to compare', 'vector,fulltext,hybrid')
    .option('--top-k <n>', "items retrieved per question (default: the project's top-K)")
    .option('--json', 'print the figures as JSON')
    .option('--progress', 'draw the progress bar on stderr even when it is not a terminal')
    .option('--per-question', "with --json: each question's rank, relevance evidence and abstention, in file order")
    .option(
      '--field-weights <title,section>',
      "BM25F weights of the page title and section path (what-if; default the service's)",
    )
    .action(
      async (flags: {
        project: string;
        questions: string;
        methods: string;
        topK?: string;
        json?: boolean;
        progress?: boolean;
        perQuestion?: boolean;
        fieldWeights?: string;
      }) => {
        const methods = flags.methods.split(',').map((m) => m.trim()) as RetrievalMethod[];
        const unknown = methods.filter((m) => !RETRIEVAL_METHODS.includes(m));
        if (unknown.length)
          throw new Error(`unknown method(s) ${unknown.join(', ')}: use ${RETRIEVAL_METHODS.join(', ')}`);
        const questions = parseQuestionFile(readFileSync(flags.questions, 'utf8'));
        const fieldWeights = flags.fieldWeights === undefined ? undefined : parseFieldWeights(flags.fieldWeights);
        const figures = await withDatabase((ds, projects) =>
          evaluateProject(ds, projects, flags.project, questions, methods, {
            topK: flags.topK === undefined ? undefined : Number(flags.topK),
            progress: flags.progress || process.stderr.isTTY,
            stream: flags.progress && !process.stderr.isTTY ? process.stderr : undefined,
            perQuestion: flags.perQuestion,
            fieldWeights,
          }),
        );
        process.stdout.write(flags.json ? `${JSON.stringify(figures, null, 2)}\n` : formatEval(figures));
      },
    );
}

/**
 * `--field-weights`: `TITLE,SECTION`, two finite numbers ≥ 0 (`2,1.5`).
 * @throws Error for anything else.
 */
export function parseFieldWeights(text: string): FieldWeights {
  const parts = text.split(',').map((x) => Number(x.trim()));
  if (parts.length !== 2 || parts.some((x) => !Number.isFinite(x) || x < 0))
    throw new Error(`--field-weights: expected TITLE,SECTION (two numbers ≥ 0), got ${text}`);
  return { title: parts[0], section: parts[1] };
}
