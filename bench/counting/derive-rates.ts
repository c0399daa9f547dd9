/**
 * Derives the per-feature rates of `approx:script-v1` from measurements against every reference tokenizer.
 *
 *   node tools/run-ts.js bench/counting/derive-rates.ts            # prints the rate table and a report
 *   TAU=0.93 TRAIN_MIN_CHARS=100 node tools/run-ts.js bench/counting/derive-rates.ts
 *
 * Method. Every message of the corpus (see libs/token-counting/src/testing/corpus.ts) plus the generated
 * pathological runs is counted by all 11 reference tokenizers; T(m) is the largest of those counts. Half
 * the messages (seeded split) train, half validate. The rates r solve the linear programme
 *
 *   minimise   5 · Σ_english-prose features·r / Σ_english-prose o200k(m)  +  Σ_kind mean_kind(features·r / T)
 *   subject to features(m)·r ≥ TAU · T(m)  for every training message of ≥ TRAIN_MIN_CHARS characters
 *
 * i.e. the estimate is never below TAU (default 0.93) of the worst tokenizer on any training message,
 * and among such rates, the ones that over-count English prose against o200k_base the least.
 * Validation then reports the share of held-out messages (≥200 characters) whose estimate ÷ true is
 * below 0.87 for each tokenizer, which must stay under 0.1%.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FEATURE_COUNT, FEATURE_NAMES } from '../../libs/token-counting/src/script-features';
import { CORPUS_DATA_SETS, MAIN_KINDS, pathologicalMessages, seededRandom } from '../../libs/token-counting/src/testing/corpus';
import { sharedDataDir } from '../common';
import { solveCoveringLp } from './lp';
import { dot, measureCorpus, quantile } from './measure';

const TAU = Number(process.env['TAU'] ?? 0.93);
const TRAIN_MIN_CHARS = Number(process.env['TRAIN_MIN_CHARS'] ?? 100);
const ENGLISH_WEIGHT = Number(process.env['ENGLISH_WEIGHT'] ?? 5);
const BOUND = 0.87;

const DATA = sharedDataDir(CORPUS_DATA_SETS);
const { messages, references, counts, features } = measureCorpus(DATA, pathologicalMessages(600, 7, DATA));
const worst = messages.map((_, m) => Math.max(...counts.map((c) => c[m])));
const random = seededRandom(20261130);
const isTrain = messages.map(() => random() < 0.5);

// Objective weights per feature.
const c = new Array<number>(FEATURE_COUNT).fill(0);
const english = messages.map((m, i) => i).filter((i) => messages[i].kind === 'english');
const englishO200k = english.reduce((s, i) => s + counts[0][i], 0);
for (const i of english) for (let f = 0; f < FEATURE_COUNT; f++) c[f] += (ENGLISH_WEIGHT * features[i][f]) / englishO200k;
const kinds = new Map<string, number[]>();
messages.forEach((m, i) => {
  if (m.text.length < TRAIN_MIN_CHARS || worst[i] === 0) return;
  const list = kinds.get(m.kind) ?? [];
  list.push(i);
  kinds.set(m.kind, list);
});
for (const list of kinds.values()) {
  for (const i of list) for (let f = 0; f < FEATURE_COUNT; f++) c[f] += features[i][f] / worst[i] / list.length;
}

const onlyKinds = process.env['CONSTRAINT_KINDS']?.split(',');
const train = messages
  .map((_, i) => i)
  .filter((i) => isTrain[i] && messages[i].text.length >= TRAIN_MIN_CHARS)
  .filter((i) => !onlyKinds || onlyKinds.includes(messages[i].kind));
const started = Date.now();
const lp = solveCoveringLp(
  train.map((i) => features[i]),
  train.map((i) => TAU * worst[i]),
  c,
);
process.stderr.write(`LP: ${train.length} constraints, ${lp.iterations} pivots, ${Date.now() - started} ms\n`);
// Round up to 4 decimals so the printed table is at least as high as the solution.
const rates = Float64Array.from(lp.rates, (r) => Math.ceil(r * 1e4) / 1e4);

// ---- calibration floor ---------------------------------------------------------------------------------
// The floor is the base a learned per-model factor (≥ 1) multiplies: a central fit to the *smallest*
// count among the reference tokenizers (non-negative least squares on relative error), scaled down so it
// stays at or under that smallest count for 98% of training messages.
const least = messages.map((_, m) => Math.min(...counts.map((c) => c[m])));
const floorTrain = train.filter((i) => least[i] > 0);
const gram = Array.from({ length: FEATURE_COUNT }, () => new Float64Array(FEATURE_COUNT));
const rhs = new Float64Array(FEATURE_COUNT);
for (const i of floorTrain) {
  const w = 1 / (least[i] * least[i]);
  const f = features[i];
  for (let a = 0; a < FEATURE_COUNT; a++) {
    if (f[a] === 0) continue;
    rhs[a] += w * f[a] * least[i];
    for (let b = 0; b < FEATURE_COUNT; b++) gram[a][b] += w * f[a] * f[b];
  }
}
const floorFit = new Float64Array(FEATURE_COUNT);
for (let sweep = 0; sweep < 5000; sweep++) {
  let change = 0;
  for (let a = 0; a < FEATURE_COUNT; a++) {
    if (gram[a][a] === 0) continue;
    let s = rhs[a];
    for (let b = 0; b < FEATURE_COUNT; b++) if (b !== a) s -= gram[a][b] * floorFit[b];
    const next = Math.max(0, s / gram[a][a]);
    change = Math.max(change, Math.abs(next - floorFit[a]));
    floorFit[a] = next;
  }
  if (change < 1e-10) break;
}
const floorScale = quantile(
  floorTrain.filter((i) => messages[i].text.length >= 200).map((i) => least[i] / Math.max(1e-9, dot(features[i], floorFit))),
  0.02,
);
const floorRates = Float64Array.from(floorFit, (r) => Math.floor(r * Math.min(1, floorScale) * 1e4) / 1e4);

// ---- report -------------------------------------------------------------------------------------------
const lines: string[] = [];
const estimate = (i: number) => Math.ceil(dot(features[i], rates));
const englishEstimate = english.reduce((s, i) => s + estimate(i), 0);
lines.push(`TAU=${TAU} TRAIN_MIN_CHARS=${TRAIN_MIN_CHARS} ENGLISH_WEIGHT=${ENGLISH_WEIGHT}`);
lines.push(
  `English prose (${english.length} messages): estimate ÷ o200k = ${(englishEstimate / englishO200k).toFixed(3)}`,
);
for (const [split, pick] of [
  ['train', true],
  ['validate', false],
] as const) {
  lines.push(`-- ${split}: messages ≥200 chars, estimate ÷ true: below ${BOUND} / total, min, q0.001`);
  references.forEach((ref, r) => {
    const ratios: number[] = [];
    let below = 0;
    messages.forEach((m, i) => {
      if (isTrain[i] !== pick || m.text.length < 200 || m.kind === 'pathological') return;
      const ratio = estimate(i) / Math.max(1, counts[r][i]);
      ratios.push(ratio);
      if (ratio < BOUND) below++;
    });
    lines.push(
      `${ref.name.padEnd(15)} ${below}/${ratios.length} min ${quantile(ratios, 0).toFixed(3)} q0.001 ${quantile(ratios, 0.001).toFixed(3)}`,
    );
  });
}
lines.push('-- per kind (all messages ≥200 chars): mean estimate ÷ o200k, min estimate ÷ worst tokenizer');
for (const kind of [...MAIN_KINDS, 'pathological', ...[...kinds.keys()].filter((k) => k.startsWith('script:'))]) {
  const idx = messages.map((_, i) => i).filter((i) => messages[i].kind === kind && messages[i].text.length >= 200);
  if (!idx.length) continue;
  const sumEst = idx.reduce((s, i) => s + estimate(i), 0);
  const sumO = idx.reduce((s, i) => s + counts[0][i], 0);
  const minWorst = Math.min(...idx.map((i) => estimate(i) / worst[i]));
  lines.push(`${kind.padEnd(20)} n=${String(idx.length).padStart(5)} est/o200k ${(sumEst / sumO).toFixed(2)} min est/worst ${minWorst.toFixed(3)}`);
}
// ---- shipped rates: the same programme over every message (both halves) -------------------------------
const all = messages
  .map((_, i) => i)
  .filter((i) => messages[i].text.length >= TRAIN_MIN_CHARS)
  .filter((i) => !onlyKinds || onlyKinds.includes(messages[i].kind));
const shippedLp = solveCoveringLp(
  all.map((i) => features[i]),
  all.map((i) => TAU * worst[i]),
  c,
);
const shipped = Float64Array.from(shippedLp.rates, (r) => Math.ceil(r * 1e4) / 1e4);
const shippedEnglish = english.reduce((s, i) => s + Math.ceil(dot(features[i], shipped)), 0) / englishO200k;
lines.push(`shipped (all ${all.length} messages) English prose estimate ÷ o200k = ${shippedEnglish.toFixed(3)}`);
const table = FEATURE_NAMES.map((name, f) => `  ${name}: ${shipped[f]},`).join('\n');
lines.push('-- rates', `{\n${table}\n}`);
const floorTable = FEATURE_NAMES.map((name, f) => `  ${name}: ${floorRates[f]},`).join('\n');
lines.push(`-- floor rates (scale ${floorScale.toFixed(3)})`, `{\n${floorTable}\n}`);
const floorEnglish = english.reduce((s, i) => s + Math.ceil(dot(features[i], floorRates)), 0);
lines.push(`floor English prose estimate ÷ o200k = ${(floorEnglish / englishO200k).toFixed(3)}`);
process.stdout.write(lines.join('\n') + '\n');
const today = new Date().toISOString().slice(0, 10);
const validation = lines.filter((l) => / min .* q0\.001 /.test(l)).slice(references.length);
writeFileSync(
  join(__dirname, '..', '..', 'libs', 'token-counting', 'src', 'script-rates.ts'),
  `// Generated by bench/counting/derive-rates.ts on ${today} — do not edit by hand; re-run the script.
import type { FeatureName } from './script-features';

/** Tokens per unit of each feature (see \`Feature\` in script-features.ts for the units). */
export type ScriptRates = Readonly<Record<FeatureName, number>>;

/**
 * Rates of \`approx:script-v1\`: the least English-prose over-count against o200k_base such that the
 * estimate is at least ${TAU} × the largest count of the 11 reference tokenizers (${references
    .map((r) => r.name)
    .join(', ')}) on each of the ${all.length} corpus messages of ≥${TRAIN_MIN_CHARS} characters (real messages of
 * ../shared/data plus generated base64/hex/digit/URL runs). Linear programme solved by
 * bench/counting/derive-rates.ts. English prose: estimate ÷ o200k_base = ${shippedEnglish.toFixed(3)}.
 * Held-out check (rates fitted on half, messages of ≥200 characters of the other half, estimate ÷ true):
${validation.map((l) => ` *   ${l}`).join('\n')}
 */
export const SCRIPT_V1_RATES: ScriptRates = {
${FEATURE_NAMES.map((name, f) => `  ${name}: ${shipped[f]},`).join('\n')}
};

/**
 * Calibration floor (\`approx:script-v1-floor\`): a least-squares fit to the *smallest* reference count,
 * scaled by ${floorScale.toFixed(3)} so it is at or under every reference tokenizer on 98% of messages. The base
 * a per-model calibration factor (≥ 1) multiplies. English prose: floor ÷ o200k_base = ${(floorEnglish / englishO200k).toFixed(3)}.
 */
export const SCRIPT_V1_FLOOR_RATES: ScriptRates = {
${FEATURE_NAMES.map((name, f) => `  ${name}: ${floorRates[f]},`).join('\n')}
};
`,
);
writeFileSync(
  join(__dirname, 'derived-rates.json'),
  JSON.stringify(
    {
      derivedBy: 'bench/counting/derive-rates.ts',
      tau: TAU,
      trainMinChars: TRAIN_MIN_CHARS,
      englishWeight: ENGLISH_WEIGHT,
      references: references.map((r) => r.name),
      trainingMessages: train.length,
      validatedRates: Object.fromEntries(FEATURE_NAMES.map((name, f) => [name, rates[f]])),
      rates: Object.fromEntries(FEATURE_NAMES.map((name, f) => [name, shipped[f]])),
      floorScale,
      floorRates: Object.fromEntries(FEATURE_NAMES.map((name, f) => [name, floorRates[f]])),
    },
    null,
    2,
  ) + '\n',
);
