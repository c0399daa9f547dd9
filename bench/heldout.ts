/**
 * The held-out rule, as data and as a check (docs/ARCHITECTURE.md, "One held-out rule").
 *
 *   node tools/run-ts.js bench/heldout.ts      # checks the rule, writes "Tuned figures and their held-out sets"
 *
 * Every tuned figure of the service is listed in {@link TUNED_FIGURES} with the script that fits it,
 * its fit set and its held-out set by source, the script that computes its held-out figure, and
 * whether that held-out set is still blind (never looked at while the figure was chosen). The check
 * ({@link checkHeldOutRule}, also run by `npm run bench:verify`) fails when:
 * - a fit source is also a held-out source of the same figure;
 * - a figure with a held-out set names no script that scores it, or a scorer that is also a fitting script;
 * - a fitting script can reach a held-out scorer or a held-out loader through its imports (relative
 *   paths and the `@ask/*` aliases of tsconfig.base.json, followed transitively), or names a
 *   held-out source's path in its text: the tuning code cannot call what computes the held-out figure;
 * - a figure marked `ruleMet` breaks any of these, or one marked not met no longer does (mark it met).
 * Figures whose held-out set was looked at (`blind: false`) stay listed with what the rule asks next:
 * move that set to the fit set and bring a new one.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { BENCH_ROOT, commandLine, gitCommit, machine, writeResultsSection } from './common';

/** One tuned figure and the sets it was fitted and checked on. Paths are relative to the repository root. */
export interface TunedFigure {
  id: string;
  /** The figure and where the service reads it. */
  figure: string;
  code: string;
  /** Scripts that choose the figure (the tuning code). */
  fitBy: readonly string[];
  /** Sources (data sets, corpora, question files) the figure was chosen on. */
  fit: readonly string[];
  /** Sources held out by source; empty when there is none yet. */
  heldOut: readonly string[];
  /** Scripts that compute the held-out figure (none of them may be reachable from `fitBy`). */
  heldOutBy: readonly string[];
  /** Path fragments of held-out inputs that the tuning code must never name or import. */
  heldOutPaths: readonly string[];
  /** True while the held-out set has not been looked at during tuning. */
  blind: boolean;
  /** The RESULTS.md section(s) that report the figure. */
  results: readonly string[];
  /** Whether the figure meets the rule today; when false, `pending` says what is missing. */
  ruleMet: boolean;
  pending?: string;
}

export const TUNED_FIGURES: readonly TunedFigure[] = [
  {
    id: 'counting-rates',
    figure: 'approx:script-v1 rates and common-word list',
    code: 'libs/token-counting/src/script-rates.ts, common-words.ts',
    fitBy: ['bench/counting/derive-rates.ts', 'bench/counting/derive-common-words.ts'],
    fit: [
      'mt-bench-101',
      'kb-postgresql-15-docs',
      'oasst1-zh',
      'text-udhr (fit languages)',
      'text-unicode-emoji',
      'looked at, so moved here from the held-out set: arena-hard-en and text-udhr deu_1996, tur, ukr, urd, cmn_hant, tam, mya, kat (the uplift rule was chosen after they failed; the rates are still derived without their text)',
    ],
    heldOut: ['tldr-pages (bench/counting/heldout/tldr-pages.jsonl, 175 pages in 23 folders, CC BY 4.0)'],
    heldOutBy: ['bench/counting/heldout.bench.ts'],
    heldOutPaths: ['bench/counting/heldout/', 'tldr-pages', 'heldout.bench'],
    blind: true,
    results: ['Token counting on a blind held-out source', 'Token counting'],
    ruleMet: true,
  },
  {
    id: 'margin-rule',
    figure:
      'safety margin rule: spread multiple 2, 8 records of a class before its margin follows its spread; a class calibrated at 4 requests’ worth of its share of the estimate, on its estimate instead of its floor where its spread is lower by more than 0.1%',
    code: 'libs/token-counting/src/planning-margin.ts (PLANNING_MARGIN_DEFAULTS), script-calibration.ts (SCRIPT_CALIBRATION_DEFAULTS.minEvidence, BASIS_SPREAD_GAIN)',
    fitBy: [],
    fit: ['packing bench fit-set sessions (mt-bench-101, oasst1-zh, fit UDHR languages, emoji)'],
    heldOut: ['arena-hard-en', 'text-udhr deu_1996, tur, ukr, urd, cmn_hant, tam, mya, kat'],
    heldOutBy: ['bench/packing/packing.bench.ts'],
    heldOutPaths: [],
    blind: false,
    results: ['Packing against the seed ceiling'],
    ruleMet: false,
    pending:
      'chosen by hand while reading the packing bench, which scores fit and held-out sessions in one run, on the held-out sources the counting rates were already looked at on: no separate fitting script, no blind set; the estimate basis (0.1%) was chosen reading the knowledge-base rows, held-out languages (deu_1996, cmn_hant, tam) among them',
  },
  {
    id: 'fusion-weights',
    figure: 'default hybrid fusion weights per embedder',
    code: 'libs/ask-contracts/src/retrieval.ts (defaultFusionWeights)',
    fitBy: ['bench/retrieval/retrieval.bench.ts'],
    fit: [
      'kb-postgresql-15-docs with bench/retrieval/questions.jsonl',
      'redis-doc (second fit corpus)',
      'rust-book (held out at first; fit since an earlier BM25 attempt was scored on it)',
      'prometheus-docs and curl-docs (scored once blind at c16add1; fit since the BM25F fields were fitted on them)',
    ],
    heldOut: [
      'jekyll-docs with bench/retrieval/heldout/jekyll-docs.jsonl (question set written blind at 987815a)',
      'electron-docs with bench/retrieval/heldout/electron-docs.jsonl (question set written blind at e968b48)',
    ],
    heldOutBy: ['bench/retrieval/heldout.bench.ts'],
    heldOutPaths: ['heldout.bench', 'jekyll-docs', 'electron-docs'],
    blind: true,
    results: [
      'Retrieval on held-out corpora: jekyll-docs',
      'Retrieval on held-out corpora: electron-docs',
      'Retrieval quality on the PostgreSQL manual',
      'Retrieval on held-out corpora',
    ],
    ruleMet: true,
  },
  {
    id: 'bm25f-field-weights',
    figure: 'BM25F field weights of the full-text leg (page title 3, section path 1, text 1)',
    code: 'libs/persistence/src/repositories/retrieval.repository.ts (BM25F_FIELD_WEIGHTS)',
    fitBy: ['bench/retrieval/fit-fields.ts'],
    fit: [
      'kb-postgresql-15-docs with bench/retrieval/questions.jsonl',
      'redis-doc with bench/retrieval/heldout/redis-doc.jsonl',
      'rust-book with bench/retrieval/heldout/rust-book.jsonl',
      'prometheus-docs with bench/retrieval/heldout/prometheus-docs.jsonl',
      'curl-docs with bench/retrieval/heldout/curl-docs.jsonl',
    ],
    heldOut: [
      'jekyll-docs with bench/retrieval/heldout/jekyll-docs.jsonl (question set written blind at 987815a)',
      'electron-docs with bench/retrieval/heldout/electron-docs.jsonl (question set written blind at e968b48)',
    ],
    heldOutBy: ['bench/retrieval/heldout.bench.ts'],
    heldOutPaths: ['heldout.bench', 'jekyll-docs', 'electron-docs'],
    blind: true,
    results: [
      'Retrieval on held-out corpora: jekyll-docs',
      'Retrieval on held-out corpora: electron-docs',
      'BM25F field weights and the abstain rule',
      'Retrieval on held-out corpora',
    ],
    ruleMet: true,
  },
  {
    id: 'relevance-judgement',
    figure:
      "the one relevance judgement per embedder (item evidence = idf-weighted coverage of the question in any field, a lexeme no row of the project holds counting absent weight 2 times in the denominator; no item reaching 0.34 lexical, 0.35 semantic: nothing relevant, so the stand-in abstains, ask eval counts an abstention and the planner's floor takes every item for low-relevance)",
    code: 'libs/ask-contracts/src/retrieval.ts (ABSTAIN_RULES, relevanceRule), read by libs/context-budget/src/relevance.ts and the synthesis load stage',
    fitBy: ['bench/retrieval/fit-fields.ts'],
    fit: [
      'kb-postgresql-15-docs with bench/retrieval/questions.jsonl',
      'redis-doc with bench/retrieval/heldout/redis-doc.jsonl',
      'rust-book with bench/retrieval/heldout/rust-book.jsonl',
      'prometheus-docs with bench/retrieval/heldout/prometheus-docs.jsonl (scored once blind at 0.46; fit since)',
      'curl-docs with bench/retrieval/heldout/curl-docs.jsonl (scored once blind at 0.46; fit since)',
    ],
    heldOut: [
      'jekyll-docs with bench/retrieval/heldout/jekyll-docs.jsonl (question set written blind at 987815a)',
      'electron-docs with bench/retrieval/heldout/electron-docs.jsonl (question set written blind at e968b48)',
    ],
    heldOutBy: ['bench/retrieval/heldout.bench.ts'],
    heldOutPaths: ['heldout.bench', 'jekyll-docs', 'electron-docs'],
    blind: true,
    results: [
      'Retrieval on held-out corpora: jekyll-docs',
      'Retrieval on held-out corpora: electron-docs',
      'BM25F field weights and the abstain rule',
      'Retrieval on held-out corpora',
      'Relevance floor per embedder and retrieval method',
      'Abstain threshold of the local stand-in',
    ],
    ruleMet: true,
  },
  {
    id: 'summary-rules',
    figure:
      "extractive summary rules (the question's sentences first, at most 70% of the pair, floor 32 tokens) and the memory rules of issue 32 (memory's third of the room, the user's facts first, fact units)",
    code: 'libs/context-budget/src/extractive-summary.ts, plan-prompt.ts (MEMORY_SHARE)',
    fitBy: [],
    fit: [
      'memory bench sessions 0–5 (mt-bench-101 with arena-hard-en)',
      'fixtures/data/oasst1-zh excerpt',
      'looked at, so moved here from the held-out set: memory bench sessions from 6 on (mt-bench-101, arena-hard-en) and the oasst1-zh threads outside the committed excerpt (Chinese sessions 0–15 chose the fact units; sessions 16–23 were blind by session only)',
    ],
    heldOut: [
      'KdConv test split, Chinese (thu-coai/KdConv, Apache-2.0; bench/memory/heldout/README.md)',
      'Taskmaster-4 data_00, English (google-research-datasets/Taskmaster, CC BY 4.0; bench/memory/heldout/README.md)',
    ],
    heldOutBy: ['bench/memory/memory.bench.ts'],
    heldOutPaths: ['bench/memory/heldout/', 'tmp/memory/'],
    blind: true,
    results: [
      'Conversation memory: fact retention',
      'Conversation memory with a knowledge base',
      'Conversation memory with a knowledge base, 120 turns',
      'Conversation memory with a knowledge base, Chinese',
      'Conversation memory with a knowledge base, KdConv (blind by source)',
      'Conversation memory with a knowledge base, Taskmaster-4 (blind by source)',
      'Conversation memory with a knowledge base, 60 turns, KdConv (blind by source)',
      'Conversation memory with a knowledge base, 60 turns, Taskmaster-4 (blind by source)',
    ],
    ruleMet: false,
    pending:
      'chosen by hand (no fitting script) on sessions the same bench scores; its held-out sets by source (KdConv, Taskmaster-4) were brought in after the rules were frozen and scored once, blind; a fitting script that could be kept from reaching them is what is missing',
  },
];

const ALIASES: Record<string, string> = (() => {
  const config = JSON.parse(readFileSync(join(BENCH_ROOT, 'tsconfig.base.json'), 'utf8')) as {
    compilerOptions: { paths: Record<string, string[]> };
  };
  return Object.fromEntries(Object.entries(config.compilerOptions.paths).map(([k, [v]]) => [k, v]));
})();

const IMPORT =
  /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|require\(\s*['"]([^'"]+)['"]\s*\)|import\(?\s*['"]([^'"]+)['"]/g;

function resolveFile(base: string): string | undefined {
  for (const candidate of [base, `${base}.ts`, `${base}.js`, join(base, 'index.ts')]) {
    if (existsSync(candidate) && !candidate.endsWith('/')) {
      try {
        readFileSync(candidate);
        return candidate;
      } catch {
        // a folder: try the next form
      }
    }
  }
  return undefined;
}

/** The repository files `entry` reaches through its imports (itself included), as repository-relative paths. */
export function importClosure(entry: string, root = BENCH_ROOT): Set<string> {
  const seen = new Set<string>();
  const queue = [resolve(root, entry)];
  while (queue.length) {
    const file = queue.pop() as string;
    const rel = relative(root, file);
    if (seen.has(rel) || !existsSync(file)) continue;
    seen.add(rel);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[1] ?? m[2] ?? m[3];
      let target: string | undefined;
      if (spec.startsWith('.')) target = resolveFile(resolve(dirname(file), spec));
      else if (ALIASES[spec]) target = resolveFile(resolve(root, ALIASES[spec]));
      if (target) queue.push(target);
    }
  }
  return seen;
}

/** The rule's failures over `figures` (one line each), and the figures still pending. */
export function checkHeldOutRule(
  figures: readonly TunedFigure[] = TUNED_FIGURES,
  root = BENCH_ROOT,
): { failures: string[]; pending: string[] } {
  const failures: string[] = [];
  const pending: string[] = [];
  for (const f of figures) {
    const broken: string[] = [];
    for (const script of [...f.fitBy, ...f.heldOutBy]) {
      if (!existsSync(join(root, script))) failures.push(`${f.id}: ${script} does not exist`);
    }
    const shared = f.fit.filter((s) => f.heldOut.includes(s));
    if (shared.length) broken.push(`fit and held out at once: ${shared.join(', ')}`);
    if (!f.heldOut.length) broken.push('no held-out source');
    if (f.heldOut.length && !f.heldOutBy.length) broken.push('no script scores the held-out set');
    if (!f.fitBy.length) broken.push('no fitting script (chosen by hand)');
    const both = f.heldOutBy.filter((s) => f.fitBy.includes(s));
    if (both.length) broken.push(`${both.join(', ')} both fits and scores`);
    for (const script of f.fitBy) {
      const closure = importClosure(script, root);
      for (const scorer of f.heldOutBy.filter((s) => !f.fitBy.includes(s))) {
        if (closure.has(scorer)) broken.push(`${script} reaches the held-out scorer ${scorer}`);
      }
      for (const file of closure) {
        const text = readFileSync(join(root, file), 'utf8');
        for (const path of f.heldOutPaths) {
          if (text.includes(path)) broken.push(`${file} (reached from ${script}) names the held-out input ${path}`);
        }
      }
    }
    if (!f.blind) broken.push('held-out set looked at during tuning (not blind)');
    if (f.ruleMet && broken.length) failures.push(`${f.id}: marked as meeting the rule, but ${broken.join('; ')}`);
    if (!f.ruleMet && !broken.length) failures.push(`${f.id}: meets the rule now; mark it ruleMet`);
    if (!f.ruleMet && broken.length) pending.push(`${f.id}: ${f.pending ?? broken.join('; ')} (${broken.join('; ')})`);
  }
  return { failures, pending };
}

const SECTION = '## Tuned figures and their held-out sets';

function main(): void {
  const { failures, pending } = checkHeldOutRule();
  const run = { commit: gitCommit(), date: new Date().toISOString(), machine: machine() };
  const cell = (xs: readonly string[]) => (xs.length ? xs.join('; ') : '**none**');
  writeResultsSection(
    SECTION,
    [
      SECTION,
      '',
      commandLine('node tools/run-ts.js bench/heldout.ts', run),
      '',
      'The rule (docs/ARCHITECTURE.md, "One held-out rule"): every tuned figure names its fit and held-out sets by source; a held-out set looked at during tuning moves to the fit set and is replaced; the held-out figure is computed by a script the tuning code cannot reach through its imports (checked here and by `npm run bench:verify`). **Blind** = the held-out set was not looked at while the figure was chosen; a held-out row of a figure marked *not blind* is not a blind test.',
      '',
      '| figure | fit by | fit set | held-out set | held-out figure by | blind | rule |',
      '| --- | --- | --- | --- | --- | --- | --- |',
      ...TUNED_FIGURES.map(
        (f) =>
          `| ${f.figure} (\`${f.code}\`) | ${f.fitBy.length ? f.fitBy.map((s) => `\`${s}\``).join(', ') : 'by hand'} | ${cell(f.fit)} | ${cell(f.heldOut)} | ${f.heldOutBy.map((s) => `\`${s}\``).join(', ') || '–'} | ${f.blind ? 'blind' : '**not blind**'} | ${f.ruleMet ? 'met' : `**not met**: ${f.pending}`} |`,
      ),
      '',
      `Check: ${failures.length ? `**${failures.length} failing**: ${failures.join('; ')}` : 'no figure breaks what it claims'}; ${pending.length} of ${TUNED_FIGURES.length} figures do not meet the rule yet.`,
      '',
    ].join('\n'),
  );
  for (const p of pending) console.log(`held-out rule pending: ${p}`);
  for (const f of failures) console.error(`held-out rule: ${f}`);
  if (failures.length) process.exitCode = 1;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(__filename)) main();
