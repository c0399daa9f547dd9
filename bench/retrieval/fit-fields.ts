/**
 * Fits the BM25F field weights of the full-text leg and the abstain threshold of each embedder's
 * relevance judgement on the fit corpora, from `ask eval`'s per-question evidence.
 *
 *   node tools/run-ts.js bench/retrieval/fit-fields.ts [--corpora DIR] [--embedders local,local-semantic]
 *     [--grid 1:1,2:1,2:2,3:1,3:2] [--distractors 100] [--semantic-distractors 20] [--out FILE]
 *     [--from FILE[,FILE…]] [--terms FILE]
 *
 * Fit corpora: the PostgreSQL manual (bench/retrieval/questions.jsonl, its answering pages + 100 others by
 * hash, as bench/retrieval/retrieval.bench.ts takes them) and redis-doc, rust-book, prometheus-docs,
 * curl-docs (bench/retrieval/heldout/*.jsonl; every page for `local`, the answering pages + 20 others by
 * hash for `local-semantic`, as the held-out corpora bench takes them). Each is ingested once per embedder
 * into a project with no retrieval settings; then, for every field-weight pair of `--grid`
 * (title:section) and both documented hybrid weightings (0.5 / 1 and 1 / 1), `evaluateProject` (what
 * `ask eval --json --per-question --field-weights` runs) gives each question's rank and relevance
 * evidence (the best item's idf-weighted coverage). The evidence goes to `--out` (default
 * bench/retrieval/fit-fields-evidence.json); `--from FILE,…` refits from such files (merged) without ingesting.
 *
 * The choice, written to bench/RESULTS.md "BM25F field weights and the abstain rule":
 * - field weights: the grid pair whose fitted threshold (below) abstains on the largest worst-corpus
 *   share of unanswerable questions, then the best mean MRR over the fit corpora under each embedder's
 *   default weighting (means over the embedders evaluated at every grid pair; an embedder run at fewer
 *   pairs only gets its threshold fitted at the chosen one);
 * - per embedder, the threshold (0.30..0.70 by 0.01) with the largest worst-corpus share of
 *   unanswerable questions abstained, over corpora × both weightings, among those abstaining on at
 *   most 7 % of the answerable questions of each (headroom under the 10 % target); ties to the
 *   smaller worst answerable share, then the smaller threshold;
 * - leave-one-corpus-out: the same rule fitted on four corpora, scored on the fifth;
 * - "Absent lexemes": each question's absent share (the idf share of its lexemes no row of the project
 *   holds, `questionTerms`) gives its evidence under an absent weight w (coverage = Σ held idf /
 *   (Σ idf + (w − 1) · Σ absent idf), what the full-text leg computes); the same rule over w ∈ 1, 1.5, 2,
 *   3, 4, 6, 8 × the thresholds fits the pair per embedder (ties: smaller w), reported beside coverage alone,
 *   both under leave-one-corpus-out. A collecting run records the shares; evidence saved without them
 *   gets them from the same pages ingested again (`--terms FILE`, default
 *   bench/retrieval/fit-fields-terms.json, written on the first such run).
 * @throws Error when a corpus folder or question file is missing.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  BENCH_ROOT,
  commandLine,
  gitCommit,
  machine,
  numberArg,
  repoRelative,
  sharedDataDir,
  writeResultsSection,
} from '../common';
import { IngestionService, loadDocuments, type SourceDocument } from '@ask/ingestion';
import {
  closeSemanticEmbeddingPools,
  type EmbeddingProvider,
  LocalEmbeddingProvider,
  LocalSemanticEmbeddingProvider,
} from '@ask/llm-providers';
import {
  BM25F_FIELD_WEIGHTS,
  CredentialsCipher,
  type FieldWeights,
  InsightsRepository,
  KnowledgeRepository,
  ProjectsRepository,
  questionTerms,
} from '@ask/persistence';
import { createTestDatabase } from '@ask/persistence/testing';
import { ABSTAIN_RULES, defaultFusionWeights } from '@ask/ask-contracts';
import type { DataSource } from 'typeorm';
import { evaluateProject, type EvalQuestion } from '../../apps/ask-cli/src/commands/eval.command';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const CORPORA = resolve(BENCH_ROOT, arg('corpora') ?? 'tmp/corpora');
const EMBEDDERS = (arg('embedders') ?? 'local').split(',');
const GRID: FieldWeights[] = (arg('grid') ?? '1:1,2:1,2:2,3:1,3:2').split(',').map((p) => {
  const [title, section] = p.split(':').map(Number);
  return { title, section };
});
const DISTRACTORS = numberArg('distractors', 100, 0);
const SEMANTIC_DISTRACTORS = numberArg('semantic-distractors', 20, 0);
const HEADROOM = 0.07;
const WEIGHTINGS = [
  { vectorWeight: 0.5, fulltextWeight: 1 },
  { vectorWeight: 1, fulltextWeight: 1 },
] as const;
const SECTION = '## BM25F field weights and the abstain rule';
/** `--out FILE`: where a collecting run writes its evidence (default bench/retrieval/fit-fields-evidence.json). */
const EVIDENCE_FILE = resolve(BENCH_ROOT, arg('out') ?? 'bench/retrieval/fit-fields-evidence.json');
/** Licence and notes files of a fetched corpus: not pages (as the held-out corpora bench skips them). */
const NOT_A_PAGE = /(^|\/)(SOURCE|LICENSE[^/]*|COPYRIGHT|COPYING|NOTICE)(\.txt)?$/i;
const HELDOUT_SETS = ['redis-doc', 'rust-book', 'prometheus-docs', 'curl-docs'];

/** One evaluation: a corpus, embedder, field weights and weighting, with each question's evidence. */
interface Evaluation {
  set: string;
  embedder: string;
  model: string;
  pages: number;
  chunks: number;
  fieldWeights: FieldWeights;
  weighting: string;
  recallAt5: number;
  mrr: number;
  /** `absentWeight` of the embedder's rule in force when the evidence was gathered (1 when not recorded). */
  absentWeight?: number;
  /**
   * Per question: `evidence` (the best item's coverage under `absentWeight`) and `absentShare`, the
   * idf-weighted share of the question's lexemes no row of the project holds (df = 0), in [0, 1].
   */
  questions: Array<{ answerable: boolean; rank: number | null; evidence: number | null; absentShare?: number }>;
}

/** Σ idf of the question's lexemes no row of the project holds / Σ idf of all its lexemes (0: none). */
async function absentShares(ds: DataSource, projectId: string, questions: readonly EvalQuestion[]): Promise<number[]> {
  const out: number[] = [];
  for (const q of questions) {
    const t = await questionTerms(ds, projectId, q.question);
    const total = t.idf.reduce((a, b) => a + b, 0);
    const absent = t.idf.reduce((a, x, i) => a + (t.absent[i] ? x : 0), 0);
    out.push(total > 0 ? absent / total : 0);
  }
  return out;
}

/**
 * A question's evidence under absent weight `w`: coverage = Σ held idf / (Σ idf + (w − 1) · Σ absent idf),
 * so with h = the held share, evidence(w) = h / (1 + (w − 1) · absentShare), h recovered from the
 * evidence gathered under `w0`. The best item stays the best (one factor per question).
 */
function underWeight(q: { evidence: number | null; absentShare?: number }, w: number, w0: number): number | null {
  if (q.evidence === null) return null;
  const a = q.absentShare ?? 0;
  return (q.evidence * (1 + (w0 - 1) * a)) / (1 + (w - 1) * a);
}

const hash = (s: string) => createHash('sha256').update(s).digest('hex');
const weightingName = (w: { vectorWeight: number; fulltextWeight: number }) =>
  `${w.vectorWeight} / ${w.fulltextWeight}`;
const fwName = (w: FieldWeights) => `${w.title}:${w.section}`;
const pct = (x: number) => `${Math.round(x * 100)} %`;

/** The fit sets: questions in `ask eval` form and the pages per embedder. */
async function fitSets(): Promise<
  Array<{ name: string; questions: EvalQuestion[]; pages: (embedder: string) => SourceDocument[] }>
> {
  const out = [];
  const pgDir = sharedDataDir(['kb-postgresql-15-docs']);
  const pg = readFileSync(join(__dirname, 'questions.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { question: string; pages: string[] });
  const all = await loadDocuments(join(pgDir, 'kb-postgresql-15-docs'), { sourceName: 'postgresql-15' });
  const idOf = (doc: SourceDocument) => doc.uri.replace(/^.*\//, '').replace(/\.html$/, '');
  const needed = new Set(pg.flatMap((q) => q.pages));
  const others = all.filter((d) => !needed.has(idOf(d))).sort((a, b) => (hash(idOf(a)) < hash(idOf(b)) ? -1 : 1));
  const pgPages = [...all.filter((d) => needed.has(idOf(d))), ...others.slice(0, DISTRACTORS)];
  out.push({
    name: 'postgresql-manual',
    questions: pg.map((q) => ({ question: q.question, sources: q.pages })),
    pages: () => pgPages,
  });
  for (const name of HELDOUT_SETS) {
    const dir = join(CORPORA, name);
    const file = join(__dirname, 'heldout', `${name}.jsonl`);
    if (!existsSync(dir))
      throw new Error(`missing ${repoRelative(dir)}: bring the corpus as bench/retrieval/heldout/README.md says`);
    const questions = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as EvalQuestion)
      .map((q) => ({ question: q.question, sources: q.sources }));
    const docs = await loadDocuments(dir, { sourceName: name, skipFile: (p) => NOT_A_PAGE.test(p) });
    const answers = (doc: SourceDocument, e: string) => {
      const last = doc.uri.replace(/#.*$/, '').replace(/^.*\//, '');
      return doc.uri === e || last === e || last.replace(/\.[^.]*$/, '') === e;
    };
    const expected = questions.flatMap((q) => q.sources);
    const answering = docs.filter((d) => expected.some((e) => answers(d, e)));
    const rest = docs.filter((d) => !answering.includes(d)).sort((a, b) => (hash(a.uri) < hash(b.uri) ? -1 : 1));
    const subset = [...answering, ...rest.slice(0, SEMANTIC_DISTRACTORS)];
    out.push({ name, questions, pages: (embedder: string) => (embedder === 'local' ? docs : subset) });
  }
  return out;
}

/** Ingests every fit set per embedder and evaluates it under every grid point and weighting. */
async function collect(): Promise<Evaluation[]> {
  const sets = await fitSets();
  const db = await createTestDatabase();
  const evaluations: Evaluation[] = [];
  try {
    const ds = db.dataSource;
    const projects = new ProjectsRepository(ds, new CredentialsCipher(undefined));
    const ingestion = new IngestionService(new KnowledgeRepository(ds), new InsightsRepository(ds));
    for (const name of EMBEDDERS) {
      const embedder: EmbeddingProvider =
        name === 'local' ? new LocalEmbeddingProvider() : new LocalSemanticEmbeddingProvider({ threads: 2 });
      for (const set of sets) {
        const docs = set.pages(name);
        const project = await projects.create({
          name: `fit ${set.name} ${name}`,
          embeddingSettings: { provider: embedder.provider, model: embedder.model, dimensions: embedder.dimensions },
        });
        const ingested = await ingestion.ingest(project.id, docs, embedder);
        await new KnowledgeRepository(ds).refreshStatistics();
        console.log(`${set.name} ${name}: ${docs.length} pages, ${ingested.chunks} chunks`);
        const absent = await absentShares(ds, project.id, set.questions);
        const absentWeight = ABSTAIN_RULES[embedder.model]?.absentWeight ?? 1;
        for (const weighting of WEIGHTINGS) {
          await projects.updateSettings(project.id, { retrievalSettings: { ...weighting } });
          for (const fieldWeights of GRID) {
            const [f] = await evaluateProject(ds, projects, project.id, set.questions, ['hybrid'], {
              perQuestion: true,
              fieldWeights,
            });
            evaluations.push({
              set: set.name,
              embedder: name,
              model: embedder.model,
              pages: docs.length,
              chunks: ingested.chunks,
              fieldWeights,
              weighting: weightingName(weighting),
              recallAt5: f.recallAt5,
              mrr: f.mrr,
              absentWeight,
              questions: (f.questions ?? []).map(({ answerable, rank, evidence }, i) => ({
                answerable,
                rank,
                evidence,
                absentShare: absent[i],
              })),
            });
            console.log(
              `  ${weightingName(weighting)} fields ${fwName(fieldWeights)}: recall@5 ${f.recallAt5} MRR ${f.mrr}`,
            );
          }
        }
      }
    }
  } finally {
    await db.drop();
    await closeSemanticEmbeddingPools();
  }
  return evaluations;
}

/** Shares abstained at `below` under absent weight `w`: unanswerable abstained and answerable wrongly abstained. */
function shares(
  e: Evaluation,
  below: number,
  w = 1,
): { unanswerable: number; answerable: number; u: string; a: string } {
  const abstains = (x: number | null) => x === null || x < below;
  const ev = (q: Evaluation['questions'][number]) => underWeight(q, w, e.absentWeight ?? 1);
  const ua = e.questions.filter((q) => !q.answerable);
  const aa = e.questions.filter((q) => q.answerable);
  const nu = ua.filter((q) => abstains(ev(q))).length;
  const na = aa.filter((q) => abstains(ev(q))).length;
  return {
    unanswerable: ua.length ? nu / ua.length : 1,
    answerable: aa.length ? na / aa.length : 0,
    u: `${nu}/${ua.length}`,
    a: `${na}/${aa.length}`,
  };
}

const THRESHOLDS = Array.from({ length: 41 }, (_, i) => Math.round((0.3 + i * 0.01) * 100) / 100);

/** Absent weights tried with every threshold (1: coverage alone); bounded, none read from a corpus. */
const ABSENT_WEIGHTS = [1, 1.5, 2, 3, 4, 6, 8];

/**
 * The same rule over (absent weight, threshold) pairs: the largest worst-corpus unanswerable share with
 * at most {@link HEADROOM} answerable wrongly abstained on each corpus and weighting; ties to the smaller
 * worst answerable share, then the smaller absent weight, then the smaller threshold.
 */
function fitPair(
  evaluations: readonly Evaluation[],
): { w: number; below: number; worstU: number; worstA: number } | null {
  let best: { w: number; below: number; worstU: number; worstA: number } | null = null;
  for (const w of ABSENT_WEIGHTS) {
    for (const below of THRESHOLDS) {
      const s = evaluations.map((e) => shares(e, below, w));
      const worstU = Math.min(...s.map((x) => x.unanswerable));
      const worstA = Math.max(...s.map((x) => x.answerable));
      if (worstA > HEADROOM) continue;
      if (!best || worstU > best.worstU || (worstU === best.worstU && worstA < best.worstA))
        best = { w, below, worstU, worstA };
    }
  }
  return best;
}

/** The fitting rule over `evaluations` (corpora × weightings of one embedder and field weights). */
function fitThreshold(evaluations: readonly Evaluation[]): { below: number; worstU: number; worstA: number } | null {
  let best: { below: number; worstU: number; worstA: number } | null = null;
  for (const below of THRESHOLDS) {
    const s = evaluations.map((e) => shares(e, below));
    const worstU = Math.min(...s.map((x) => x.unanswerable));
    const worstA = Math.max(...s.map((x) => x.answerable));
    if (worstA > HEADROOM) continue;
    if (!best || worstU > best.worstU || (worstU === best.worstU && worstA < best.worstA))
      best = { below, worstU, worstA };
  }
  return best;
}

function report(
  evaluations: readonly Evaluation[],
  sources: ReadonlyArray<{
    command: string;
    run: { commit: string; date: string; machine: { nproc: number; node: string } };
  }>,
  refit?: { command: string; commit: string },
  termsSource?: string,
): string {
  const embedders = [...new Set(evaluations.map((e) => e.embedder))];
  const grid = [...new Map(evaluations.map((e) => [fwName(e.fieldWeights), e.fieldWeights])).values()];
  const fullGrid = embedders.filter((emb) =>
    grid.every((fw) => evaluations.some((e) => e.embedder === emb && fwName(e.fieldWeights) === fwName(fw))),
  );
  const sets = [...new Set(evaluations.map((e) => e.set))];
  const defaultWeighting = (embedder: string) => {
    const w = defaultFusionWeights(embedder);
    return weightingName({ vectorWeight: w.vectorWeight, fulltextWeight: w.fulltextWeight });
  };
  const at = (embedder: string, fw: FieldWeights, weighting?: string) =>
    evaluations.filter(
      (e) =>
        e.embedder === embedder && fwName(e.fieldWeights) === fwName(fw) && (!weighting || e.weighting === weighting),
    );
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const lines: string[] = [
    SECTION,
    '',
    ...sources.map((x) => commandLine(x.command, x.run)),
    ...(refit ? ['', `Refitted from that evidence by \`${refit.command}\` (commit ${refit.commit}).`] : []),
    ...(termsSource ? ['', termsSource] : []),
    '',
    'Fit corpora: the PostgreSQL manual (bench/retrieval/questions.jsonl over its answering pages + 100 others), redis-doc, rust-book,',
    'prometheus-docs and curl-docs (bench/retrieval/heldout/*.jsonl; every page for `local`, answering pages + 20 others for',
    '`local-semantic`). Each question through `ask eval` (evaluateProject, per-question evidence, hybrid), under both documented',
    'weightings. Field weights: the grid pair whose fitted threshold abstains on the largest worst-corpus share of unanswerable',
    'questions, then the best mean MRR under the default weighting; threshold: the largest',
    `worst-corpus share of unanswerable abstained with at most ${pct(HEADROOM)} of the answerable wrongly abstained on every corpus and weighting.`,
    '',
    '| embedder | field weights (title:section) | ' +
      sets.map((s) => `${s} recall@5 / MRR`).join(' | ') +
      ' | mean MRR | fitted threshold: worst unanswerable / answerable abstained |',
    '| --- | --- | ' + sets.map(() => '---').join(' | ') + ' | --- | --- |',
  ];
  // Per grid point: the worst-corpus unanswerable share at its own fitted threshold (mean over the
  // embedders run), then the mean MRR, decide.
  const score = new Map<string, { worstU: number; mrr: number }>();
  for (const fw of grid) {
    const worst: number[] = [];
    const mrrs: number[] = [];
    for (const emb of embedders) {
      const rows = at(emb, fw, defaultWeighting(emb));
      if (rows.length === 0) continue;
      const fit = fitThreshold(at(emb, fw));
      if (fullGrid.includes(emb)) {
        worst.push(fit?.worstU ?? 0);
        mrrs.push(mean(rows.map((r) => r.mrr)));
      }
      const cells = sets.map((s) => {
        const e = rows.find((r) => r.set === s);
        return e ? `${e.recallAt5.toFixed(3)} / ${e.mrr.toFixed(3)}` : '–';
      });
      const threshold = fit ? `${fit.below.toFixed(2)}: ${pct(fit.worstU)} / ${pct(fit.worstA)}` : 'none';
      lines.push(
        `| ${emb} (${defaultWeighting(emb)}) | ${fwName(fw)} | ${cells.join(' | ')} | ${mean(rows.map((r) => r.mrr)).toFixed(3)} | ${threshold} |`,
      );
    }
    score.set(fwName(fw), { worstU: mean(worst), mrr: mean(mrrs) });
  }
  const better = (a: FieldWeights, b: FieldWeights) => {
    const x = score.get(fwName(a)) ?? { worstU: 0, mrr: 0 };
    const y = score.get(fwName(b)) ?? { worstU: 0, mrr: 0 };
    return y.worstU > x.worstU || (y.worstU === x.worstU && y.mrr > x.mrr) ? b : a;
  };
  const chosen = grid.reduce(better);
  lines.push(
    '',
    `Chosen field weights: **title ${chosen.title}, section ${chosen.section}** (in force: title ${BM25F_FIELD_WEIGHTS.title}, section ${BM25F_FIELD_WEIGHTS.section}).`,
    '',
  );
  for (const emb of embedders) {
    const evs = at(emb, chosen);
    const fit = fitThreshold(evs);
    const model = evs[0]?.model ?? emb;
    const rule = ABSTAIN_RULES[model];
    const inForce = rule
      ? `absent weight ${rule.absentWeight}, below ${rule.below} ("Absent lexemes" below)`
      : undefined;
    lines.push(
      `**${emb}** (\`${model}\`), coverage alone (absent weight 1): fitted threshold **${fit ? fit.below.toFixed(2) : 'none'}**` +
        (fit
          ? ` (worst unanswerable abstained ${pct(fit.worstU)}, worst answerable wrongly abstained ${pct(fit.worstA)})`
          : ' (no threshold keeps every corpus within the headroom)') +
        `; in force: ${inForce ?? 'none'}.`,
      '',
      '| corpus | weighting | unanswerable abstained | answerable wrongly abstained |',
      '| --- | --- | --- | --- |',
    );
    if (fit) {
      for (const e of evs) {
        const s = shares(e, fit.below);
        lines.push(`| ${e.set} | ${e.weighting} | ${s.u} (${pct(s.unanswerable)}) | ${s.a} (${pct(s.answerable)}) |`);
      }
    }
    lines.push('', 'Leave one corpus out (threshold fitted on the other corpora, scored on the one left out):', '');
    lines.push(
      '| left out | threshold | weighting | unanswerable abstained | answerable wrongly abstained |',
      '| --- | --- | --- | --- | --- |',
    );
    for (const s of sets) {
      const loco = fitThreshold(evs.filter((e) => e.set !== s));
      for (const e of evs.filter((x) => x.set === s)) {
        if (!loco) {
          lines.push(`| ${s} | none | ${e.weighting} | – | – |`);
          continue;
        }
        const x = shares(e, loco.below);
        lines.push(
          `| ${s} | ${loco.below.toFixed(2)} | ${e.weighting} | ${x.u} (${pct(x.unanswerable)}) | ${x.a} (${pct(x.answerable)}) |`,
        );
      }
    }
    lines.push('');
  }
  lines.push(...absentReport(embedders.map((emb) => ({ emb, evs: at(emb, chosen) }))));
  return lines.join('\n');
}

/**
 * The second piece of evidence: question lexemes no row of the project holds count `absentWeight`
 * times in the coverage's denominator. Per embedder (at the chosen field weights), the pair fitted by
 * {@link fitPair} beside coverage alone (absent weight 1), per corpus and weighting, and both under
 * leave-one-corpus-out; adopted only when its worst left-out unanswerable share is larger with every
 * left-out answerable share ≤ 10 %.
 */
function absentReport(per: ReadonlyArray<{ emb: string; evs: Evaluation[] }>): string[] {
  const lines: string[] = [
    '### Absent lexemes: a second piece of evidence',
    '',
    'A question lexeme no row of the project holds (df = 0) counts `absentWeight` times in the denominator of the coverage:',
    "coverage = Σ held idf / (Σ idf + (absentWeight − 1) · Σ absent idf) (`questionTerms`, the full-text leg's SQL). Fitted with the",
    `threshold by the same rule over absent weights ${ABSENT_WEIGHTS.join(', ')} × thresholds 0.30..0.70 (ties: smaller worst answerable`,
    'share, then smaller absent weight, then smaller threshold). Adopted only if, left one corpus out, its worst unanswerable share',
    "abstained is larger than coverage alone's with every left-out answerable share at most 10 %.",
    '',
  ];
  const a = (x: { worstU: number; worstA: number }) => `${pct(x.worstU)} / ${pct(x.worstA)}`;
  for (const { emb, evs } of per) {
    if (evs.some((e) => e.questions.some((q) => q.absentShare === undefined))) {
      lines.push(`**${emb}**: no absent shares in the evidence.`, '');
      continue;
    }
    const model = evs[0]?.model ?? emb;
    const one = fitThreshold(evs);
    const two = fitPair(evs);
    const rule = ABSTAIN_RULES[model];
    lines.push(
      `**${emb}** (\`${model}\`): coverage alone ${one ? `below ${one.below.toFixed(2)}: ${a(one)}` : 'none'};` +
        ` fitted pair ${two ? `absent weight **${two.w}**, below **${two.below.toFixed(2)}**: ${a(two)}` : 'none'}` +
        ` (worst unanswerable / answerable abstained); in force: absent weight ${rule?.absentWeight ?? 'none'}, below ${rule?.below ?? 'none'}.`,
      '',
      '| corpus | weighting | coverage alone: unanswerable / answerable abstained | with absent weight: unanswerable / answerable abstained |',
      '| --- | --- | --- | --- |',
    );
    for (const e of evs) {
      const x = one ? shares(e, one.below, 1) : undefined;
      const y = two ? shares(e, two.below, two.w) : undefined;
      lines.push(
        `| ${e.set} | ${e.weighting} | ${x ? `${x.u} (${pct(x.unanswerable)}) / ${x.a} (${pct(x.answerable)})` : '–'} | ${y ? `${y.u} (${pct(y.unanswerable)}) / ${y.a} (${pct(y.answerable)})` : '–'} |`,
      );
    }
    lines.push(
      '',
      'Leave one corpus out (each fitted on the other corpora, scored on the one left out):',
      '',
      '| left out | weighting | coverage alone: threshold, unanswerable / answerable | absent weight, threshold, unanswerable / answerable |',
      '| --- | --- | --- | --- |',
    );
    const loco = { one: [] as Array<{ u: number; a: number }>, two: [] as Array<{ u: number; a: number }> };
    for (const set of [...new Set(evs.map((e) => e.set))]) {
      const rest = evs.filter((e) => e.set !== set);
      const f1 = fitThreshold(rest);
      const f2 = fitPair(rest);
      for (const e of evs.filter((x) => x.set === set)) {
        const x = f1 ? shares(e, f1.below, 1) : undefined;
        const y = f2 ? shares(e, f2.below, f2.w) : undefined;
        if (x) loco.one.push({ u: x.unanswerable, a: x.answerable });
        if (y) loco.two.push({ u: y.unanswerable, a: y.answerable });
        lines.push(
          `| ${set} | ${e.weighting} | ${f1 && x ? `${f1.below.toFixed(2)}: ${x.u} / ${x.a}` : 'none'} | ${f2 && y ? `${f2.w}, ${f2.below.toFixed(2)}: ${y.u} / ${y.a}` : 'none'} |`,
        );
      }
    }
    const worst = (xs: Array<{ u: number; a: number }>) => ({
      worstU: xs.length ? Math.min(...xs.map((x) => x.u)) : 0,
      worstA: xs.length ? Math.max(...xs.map((x) => x.a)) : 1,
    });
    const w1 = worst(loco.one);
    const w2 = worst(loco.two);
    const beats = w2.worstU > w1.worstU && w2.worstA <= 0.1;
    lines.push(
      '',
      `Left out, worst unanswerable / answerable abstained: coverage alone ${a(w1)}, with the absent weight ${a(w2)}: ` +
        (beats ? '**the absent weight beats coverage alone**.' : '**no gain over coverage alone**.'),
      '',
    );
  }
  return lines;
}

/** `--terms FILE`: absent shares of evidence gathered without them (default bench/retrieval/fit-fields-terms.json). */
const TERMS_FILE = resolve(BENCH_ROOT, arg('terms') ?? 'bench/retrieval/fit-fields-terms.json');

/**
 * Evidence saved before the absent shares were recorded: each question's share comes from the same
 * pages ingested again (term statistics are the embedder's chunks' words: the local embedder's ingest of
 * the same pages gives the same chunks, checked by their count) through `questionTerms`. Read from
 * `--terms FILE` when it exists, else computed and written there. Returns the line naming its source.
 * @throws Error when a re-ingest gives another chunk count than the evaluation's.
 */
async function fillAbsentShares(evaluations: Evaluation[]): Promise<string | undefined> {
  const missing = evaluations.filter((e) => e.questions.some((q) => q.absentShare === undefined));
  if (missing.length === 0) return undefined;
  const key = (e: { set: string; embedder: string }) => `${e.set} ${e.embedder}`;
  let saved: {
    command: string;
    commit: string;
    date: string;
    shares: Record<string, { chunks: number; shares: number[] }>;
  };
  if (existsSync(TERMS_FILE)) {
    saved = JSON.parse(readFileSync(TERMS_FILE, 'utf8'));
  } else {
    const sets = await fitSets();
    const db = await createTestDatabase();
    const shares: Record<string, { chunks: number; shares: number[] }> = {};
    try {
      const ds = db.dataSource;
      const projects = new ProjectsRepository(ds, new CredentialsCipher(undefined));
      const ingestion = new IngestionService(new KnowledgeRepository(ds), new InsightsRepository(ds));
      const embedder = new LocalEmbeddingProvider();
      for (const k of [...new Set(missing.map(key))]) {
        const e = missing.find((x) => key(x) === k) as Evaluation;
        const set = sets.find((x) => x.name === e.set);
        if (!set) throw new Error(`no fit set ${e.set}`);
        const project = await projects.create({
          name: `terms ${k}`,
          embeddingSettings: { provider: embedder.provider, model: embedder.model, dimensions: embedder.dimensions },
        });
        const ingested = await ingestion.ingest(project.id, set.pages(e.embedder), embedder);
        await new KnowledgeRepository(ds).refreshStatistics();
        shares[k] = { chunks: ingested.chunks, shares: await absentShares(ds, project.id, set.questions) };
        console.log(`${k}: ${ingested.chunks} chunks (evaluated: ${e.chunks})`);
      }
    } finally {
      await db.drop();
    }
    saved = {
      command: `node tools/run-ts.js bench/retrieval/fit-fields.ts ${process.argv.slice(2).join(' ')}`.trim(),
      commit: gitCommit(),
      date: new Date().toISOString(),
      shares,
    };
    writeFileSync(TERMS_FILE, `${JSON.stringify(saved)}\n`);
  }
  for (const e of missing) {
    const s = saved.shares[key(e)];
    if (!s || s.chunks !== e.chunks || s.shares.length !== e.questions.length)
      throw new Error(`absent shares of ${key(e)}: ${s?.chunks} chunks, evaluated on ${e.chunks}`);
    e.questions.forEach((q, i) => (q.absentShare = s.shares[i]));
  }
  return `Absent shares of that evidence: the same pages ingested again (same chunk counts) through \`questionTerms\`, by \`${saved.command}\` (commit ${saved.commit}; ${repoRelative(TERMS_FILE)}).`;
}

async function main(): Promise<void> {
  const from = arg('from');
  // The code that runs is the checkout's at start (files edited during a long run do not count).
  const startCommit = gitCommit();
  const started = new Date().toISOString();
  const files = (from ?? '').split(',').filter((f) => f !== '');
  const saved = files.map(
    (f) =>
      JSON.parse(readFileSync(resolve(BENCH_ROOT, f), 'utf8')) as {
        commit: string;
        date: string;
        command: string;
        machine: { nproc: number; node: string };
        evaluations: Evaluation[];
      },
  );
  const evaluations: Evaluation[] = from ? saved.flatMap((f) => f.evaluations) : await collect();
  if (from) console.log(`refitting from ${from}`);
  const termsSource = from ? await fillAbsentShares(evaluations) : undefined;
  const thisCommand = `node tools/run-ts.js bench/retrieval/fit-fields.ts ${process.argv.slice(2).join(' ')}`.trim();
  const sources = from
    ? saved.map((f) => ({ command: f.command, run: f }))
    : [{ command: thisCommand, run: { commit: startCommit, date: started, machine: machine() } }];
  const [{ command, run }] = sources;
  if (!from) writeFileSync(EVIDENCE_FILE, `${JSON.stringify({ ...run, command, evaluations })}\n`);
  const refit = from ? { command: thisCommand, commit: startCommit } : undefined;
  const markdown = report(evaluations, sources, refit, termsSource);
  console.log(markdown);
  writeResultsSection(SECTION, markdown);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
