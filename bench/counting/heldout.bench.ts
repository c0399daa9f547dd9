/**
 * The blind held-out figures of the counting estimate and of its calibration (bench/heldout.ts,
 * "counting-rates"): `approx:script-v1`, with the rates and common words the fit froze, scored once on
 * a source no fitting or checking step had read, and the calibration "after" ratio on text disjoint by
 * source from the usage records it is learned from.
 *
 *   node tools/run-ts.js bench/counting/heldout.bench.ts [--arena-bytes 1000000]
 *
 * Held-out source: bench/counting/heldout/tldr-pages.jsonl (175 tldr-pages pages in 23 folders, CC BY
 * 4.0; which pages and why: SOURCE.txt beside it). Nothing the rates are derived by (derive-rates.ts,
 * derive-common-words.ts) reaches this script or names that file; bench/heldout.ts checks it.
 *
 * 1. Message level: estimate ÷ true tokens of every page under each reference tokenizer (text only, no
 *    framing), per language (Σ estimate ÷ Σ true, with the page minimum) and the worst page; the 15%
 *    approximate margin covers an estimate down to about 0.85 × the truth.
 * 2. Request level: per language, one session of turns (question = page 2j, answer = page 2j + 1), packed
 *    with the estimate to the counting bench's three budgets, counted with each tokenizer: requests over
 *    window − max_tokens.
 * 3. Calibration: the 50 English and 50 Chinese usage records of the counting bench's in-sample table
 *    (requests packed from mt-bench-101 and oasst1-zh sessions, seed 3, true prompt tokens per tokenizer)
 *    learn per-class factors (learnScriptCalibration, the worker's path); "before" (floor estimate) and
 *    "after" (calibrated) are Σ estimate ÷ Σ true on text of other sources: English on the tldr English
 *    pages and on the first `--arena-bytes` of arena-hard-en (another data set than mt-bench-101);
 *    Chinese on the tldr zh and zh_TW pages (another data set than oasst1-zh).
 *
 * Writes bench/counting/heldout-results.json and the "## Token counting on a blind held-out source"
 * section of bench/RESULTS.md (only that section). Sessions and arena-hard-en are read from ../shared/data
 * (or $ASK_SHARED_DATA); the held-out pages from the repository.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CharsDiv4Counter,
  learnScriptCalibration,
  ScriptAwareCounter,
  ScriptCalibratedCounter,
  usageRecordOf,
  type TokenCounter,
} from '@ask/token-counting';
import {
  type Budget,
  type CorpusSession,
  corpusMessages,
  corpusSessions,
  packRequests,
  PACKING_SYSTEM_PROMPT,
  referenceTokenizers,
  sample,
  trueRequestTokens,
} from '@ask/token-counting/testing';
import { commandLine, gitCommit, machine, numberArg, sharedDataDir, writeResultsSection } from '../common';
import { quantile } from './measure';

const SECTION = '## Token counting on a blind held-out source';
const PAGES_FILE = join(__dirname, 'heldout', 'tldr-pages.jsonl');
const ARENA_BYTES = numberArg('arena-bytes', 1_000_000);
/** Below this ratio a page counts as under-estimated (the counting bench's line). */
const LOW = 0.87;
const BUDGETS: Budget[] = [
  { window: 8192, maxTokens: 1024, reserve: 600, margin: 0.15 },
  { window: 4096, maxTokens: 512, reserve: 600, margin: 0.15 },
  { window: 16384, maxTokens: 2048, reserve: 600, margin: 0.15 },
];

const started = Date.now();
const log = (m: string) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0)}s] ${m}\n`);
const f2 = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : '–');
const f3 = (x: number) => (Number.isFinite(x) ? x.toFixed(3) : '–');

interface Page {
  path: string;
  language: string;
  text: string;
}
const pages: Page[] = readFileSync(PAGES_FILE, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line) as Page);
const languages = [...new Set(pages.map((p) => p.language))];

const DATA = sharedDataDir(['mt-bench-101', 'oasst1-zh', 'arena-hard-en']);
log('loading reference tokenizers');
const references = referenceTokenizers();
const estimate = new ScriptAwareCounter();
const chars4 = new CharsDiv4Counter();
/** Per tokenizer, its count of each text (text only), memoised. */
const caches = references.map(() => new Map<string, number>());
const truth = (k: number, text: string): number => {
  let n = caches[k].get(text);
  if (n === undefined) {
    n = references[k].counter.countText(text);
    caches[k].set(text, n);
  }
  return n;
};

// ---- 1. message level ------------------------------------------------------------------------------------
const scored = pages.filter((p) => p.text.length >= 200);
const COUNTERS: Array<{ id: string; counter: TokenCounter }> = [
  { id: 'approx:script-v1', counter: estimate },
  { id: 'approx:chars4', counter: chars4 },
];
const messageRows = COUNTERS.flatMap(({ id, counter }) =>
  references.map((ref, k) => {
    const ratios = scored.map((p) => counter.countText(p.text) / Math.max(1, truth(k, p.text)));
    let worst = 0;
    ratios.forEach((r, i) => {
      if (r < ratios[worst]) worst = i;
    });
    const perLanguage = Object.fromEntries(
      languages.map((language) => {
        const of = scored.map((p, i) => ({ p, i })).filter(({ p }) => p.language === language);
        const est = of.reduce((s, { p }) => s + counter.countText(p.text), 0);
        const tru = of.reduce((s, { p }) => s + truth(k, p.text), 0);
        return [
          language,
          {
            ratio: est / Math.max(1, tru),
            min: quantile(
              of.map(({ i }) => ratios[i]),
              0,
            ),
          },
        ];
      }),
    );
    return {
      counter: id,
      reference: ref.name,
      pages: scored.length,
      below: ratios.filter((r) => r < LOW).length,
      min: ratios[worst],
      worst: {
        path: scored[worst].path,
        estimate: counter.countText(scored[worst].text),
        truth: truth(k, scored[worst].text),
      },
      perLanguage,
    };
  }),
);
log('message level done');

// ---- 2. request level ------------------------------------------------------------------------------------
const pageSessions: CorpusSession[] = languages.map((language) => {
  const of = pages.filter((p) => p.language === language);
  const turns = [];
  for (let j = 0; j + 1 < of.length; j += 2) turns.push({ question: of[j].text, answer: of[j + 1].text });
  return { id: `tldr-${language}`, kind: 'english', turns, dataSet: 'generated' };
});
const requestRows = COUNTERS.map(({ id, counter }) => {
  const packed = BUDGETS.flatMap((b) => packRequests(pageSessions, counter, b));
  const over: Record<string, number> = {};
  const worstFill: Record<string, number> = {};
  references.forEach((ref, k) => {
    over[ref.name] = 0;
    worstFill[ref.name] = 0;
    for (const req of packed) {
      const fill = trueRequestTokens(req, ref.counter, caches[k]) / (req.budget.window - req.budget.maxTokens);
      worstFill[ref.name] = Math.max(worstFill[ref.name], fill);
      if (fill > 1) over[ref.name]++;
    }
  });
  return { counter: id, requests: packed.length, over, worstFill };
});
log('request level done');

// ---- 3. calibration on other sources -----------------------------------------------------------------------
const sessions = corpusSessions({ dataDir: DATA });
let arenaBytes = 0;
const arena = corpusMessages({ dataDir: DATA })
  .filter((m) => m.dataSet === 'arena-hard-en')
  .filter((m) => {
    if (arenaBytes >= ARENA_BYTES) return false;
    arenaBytes += Buffer.byteLength(m.text);
    return true;
  })
  .map((m) => m.text);
const EVAL: Record<'english' | 'chinese', Array<{ name: string; texts: string[] }>> = {
  english: [
    { name: 'tldr en', texts: pages.filter((p) => p.language === 'en').map((p) => p.text) },
    { name: `arena-hard-en, ${(arenaBytes / 1e6).toFixed(2)} MB`, texts: arena },
  ],
  chinese: [
    {
      name: 'tldr zh + zh_TW',
      texts: pages.filter((p) => p.language === 'zh' || p.language === 'zh_TW').map((p) => p.text),
    },
  ],
};
const calibration = (['english', 'chinese'] as const).flatMap((kind) => {
  const reqs = sample(
    packRequests(
      sessions.filter((s) => s.kind === kind),
      estimate,
      BUDGETS[0],
    ),
    50,
    3,
  );
  return references.flatMap((ref, k) => {
    const measurer = new ScriptCalibratedCounter({});
    const records = reqs.map((r) => {
      const parts = [PACKING_SYSTEM_PROMPT, ...r.messages.map((m) => m.content)].map((t) => measurer.measure(t));
      return {
        ...usageRecordOf(parts, r.messages.length + 1),
        reported: trueRequestTokens(r, ref.counter, caches[k]),
        source: 'usage' as const,
      };
    });
    const learned = learnScriptCalibration(records);
    const calibrated = new ScriptCalibratedCounter(learned);
    return EVAL[kind].map(({ name, texts }) => {
      const tru = texts.reduce((s, t) => s + truth(k, t), 0);
      return {
        kind,
        records: records.length,
        reference: ref.name,
        on: name,
        before: texts.reduce((s, t) => s + estimate.countText(t), 0) / Math.max(1, tru),
        after: texts.reduce((s, t) => s + calibrated.countText(t), 0) / Math.max(1, tru),
      };
    });
  });
});
log('calibration done');

// ---- write -----------------------------------------------------------------------------------------------
const run = { commit: gitCommit(), date: new Date().toISOString(), machine: machine() };
const command = `node tools/run-ts.js bench/counting/heldout.bench.ts${ARENA_BYTES !== 1_000_000 ? ` --arena-bytes ${ARENA_BYTES}` : ''}`;
writeFileSync(
  join(__dirname, 'heldout-results.json'),
  JSON.stringify({ run, command, pages: pages.length, messageRows, requestRows, calibration }, null, 1) + '\n',
);
const refs = references.map((r) => r.name);
const md: string[] = [SECTION, ''];
md.push(
  `${commandLine(command, run)} Raw figures: \`bench/counting/heldout-results.json\`.`,
  '',
  `**Blind** (bench/heldout.ts, "counting-rates"): ${pages.length} pages of tldr-pages (\`bench/counting/heldout/tldr-pages.jsonl\`, CC BY 4.0; ${languages.length} folders: ${languages.join(', ')}; chosen by a rule written before any was counted, \`SOURCE.txt\`), scored once with the rates and common-word list as committed; no fit or earlier held-out set read this source. The counting bench's own held-out rows (arena-hard-en, eight UDHR languages) are not blind and are now counted with the fit ("Token counting").`,
  '',
  `### Pages: estimate ÷ true tokens (${scored.length} pages ≥ 200 characters, text only)`,
  '',
  'The 15% approximate margin covers an estimate down to about 0.85 × the truth on a request that fills the budget.',
  '',
  '| counter | tokenizer | pages | below 0.87 | min | worst page (estimate / true) |',
  '| --- | --- | ---: | ---: | ---: | --- |',
  ...messageRows.map(
    (r) =>
      `| ${r.counter} | ${r.reference} | ${r.pages} | ${r.below} | ${f3(r.min)} | ${r.worst.path} (${r.worst.estimate} / ${r.worst.truth}) |`,
  ),
  '',
  '### approx:script-v1 per language: Σ estimate ÷ Σ true (page minimum)',
  '',
  `| language | ${refs.join(' | ')} |`,
  `| --- | ${refs.map(() => '---').join(' | ')} |`,
  ...languages.map((language) => {
    const cells = messageRows
      .filter((r) => r.counter === 'approx:script-v1')
      .map((r) => `${f2(r.perLanguage[language].ratio)} (${f2(r.perLanguage[language].min)})`);
    return `| ${language} | ${cells.join(' | ')} |`;
  }),
  '',
  '### Requests over window − max_tokens',
  '',
  `One session per folder (question = page 2j, answer = page 2j + 1), packed with each estimate to windows 8,192 / 4,096 / 16,384 with max_tokens 1,024 / 512 / 2,048, reserve 600 and the 15% margin; system prompt and framing counted. Cell: requests over (largest true ÷ limit).`,
  '',
  `| counter | requests | ${refs.join(' | ')} |`,
  `| --- | ---: | ${refs.map(() => '---').join(' | ')} |`,
  ...requestRows.map(
    (r) => `| ${r.counter} | ${r.requests} | ${refs.map((n) => `${r.over[n]} (${f2(r.worstFill[n])})`).join(' | ')} |`,
  ),
  '',
  '### Calibration "after" on other sources than its usage records',
  '',
  `Factors learned (learnScriptCalibration) from the counting bench's 50 English and 50 Chinese usage records (requests packed from mt-bench-101 and oasst1-zh sessions, seed 3, true prompt tokens of each tokenizer), then applied to text of other data sets; ratio = Σ count ÷ Σ true, before = the uncalibrated floor estimate. The in-sample table ("Token counting", "Calibration from 50 reported usages") measures "after" on text of the records' own data sets.`,
  '',
  `| tokenizer | ${Object.values(EVAL)
    .flat()
    .map((e) => `${e.name}: before → after`)
    .join(' | ')} |`,
  `| --- | ${Object.values(EVAL)
    .flat()
    .map(() => '---')
    .join(' | ')} |`,
  ...refs.map((name) => {
    const cells = (['english', 'chinese'] as const).flatMap((kind) =>
      EVAL[kind].map((e) => {
        const c = calibration.find((x) => x.kind === kind && x.reference === name && x.on === e.name);
        return c ? `${f2(c.before)} → ${f2(c.after)}` : '–';
      }),
    );
    return `| ${name} | ${cells.join(' | ')} |`;
  }),
  '',
);
writeResultsSection(SECTION, md.join('\n'));
log(`wrote bench/counting/heldout-results.json and the "${SECTION.slice(3)}" section of bench/RESULTS.md`);
