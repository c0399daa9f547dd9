/**
 * Test and bench support (not exported from the lib): real messages and multi-turn sessions, labelled
 * with their text kind, read from a data folder laid out like `fixtures/data`. The specs read the
 * committed excerpts in `fixtures/data` ({@link fixtureDataDir}, the default, inside the repository);
 * only the benches pass another folder, the full data sets (`sharedDataDir` of bench/common.ts).
 *
 * Sources: mt-bench-101 (English dialogues), arena-hard-en (long English prompts and answers, many with
 * code), oasst1-zh (Chinese threads), text-udhr (the UDHR in 26 languages), text-unicode-emoji (emoji
 * test file), kb-postgresql-15-docs (English manual pages with code blocks, and its raw JSONL as JSON).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { seededRandom } from '@ask/testing';

/** Text kinds the bench reports on; udhr languages without a kind of their own are `script:<key>`. */
export type TextKind =
  | 'english'
  | 'code'
  | 'json'
  | 'chinese'
  | 'japanese'
  | 'korean'
  | 'russian'
  | 'arabic'
  | 'hebrew'
  | 'hindi'
  | 'thai'
  | 'emoji'
  | 'pathological'
  | `script:${string}`;

/** The text kinds of the bench table, in order. */
export const MAIN_KINDS: readonly TextKind[] = [
  'english',
  'code',
  'json',
  'chinese',
  'japanese',
  'korean',
  'russian',
  'arabic',
  'hebrew',
  'hindi',
  'thai',
  'emoji',
];

/**
 * Where a text comes from: a data set folder of {@link CORPUS_DATA_SETS}, or `generated` (the seeded
 * pathological runs). The fit/held-out split (`testing/split.ts`) is by this and by UDHR language.
 */
export type CorpusDataSet = (typeof CORPUS_DATA_SETS)[number] | 'generated';

export interface CorpusMessage {
  /** Stable id: `<source>:<index>`. */
  id: string;
  kind: TextKind;
  text: string;
  /** The data set the text was read from. */
  dataSet: CorpusDataSet;
  /** The UDHR language key (`tur`, `cmn_hant`, …) for text-udhr texts. */
  language?: string;
}

/** A question/answer pair of a session. */
export interface Turn {
  question: string;
  answer: string;
}

export interface CorpusSession {
  id: string;
  kind: TextKind;
  turns: Turn[];
  /** The data set the turns were read from. */
  dataSet: CorpusDataSet;
  /** The UDHR language key for text-udhr sessions. */
  language?: string;
}

/** The repository root (the folder with nx.json above this file). */
function repoRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'nx.json'))) {
    const parent = resolve(dir, '..');
    if (parent === dir) throw new Error('corpus: cannot find the repository root (nx.json)');
    dir = parent;
  }
  return dir;
}

/** The data sets the corpus reads, as folders of a data folder (each present in `fixtures/data`). */
export const CORPUS_DATA_SETS = [
  'mt-bench-101',
  'arena-hard-en',
  'oasst1-zh',
  'kb-postgresql-15-docs',
  'text-udhr',
  'text-unicode-emoji',
] as const;

/**
 * `<repo>/fixtures/data`: committed excerpts of the data sets, same file names and formats (sources,
 * licences and which lines were kept: `fixtures/data/README.md`). What every spec reads.
 */
export function fixtureDataDir(): string {
  return join(repoRoot(), 'fixtures', 'data');
}

function read(dataDir: string, path: string): string {
  return readFileSync(join(dataDir, path), 'utf8');
}

function jsonl<T>(dataDir: string, path: string): T[] {
  return read(dataDir, path)
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as T);
}

const UDHR_KIND: Record<string, TextKind> = {
  eng: 'english',
  cmn_hans: 'chinese',
  cmn_hant: 'chinese',
  jpn: 'japanese',
  kor: 'korean',
  rus: 'russian',
  ukr: 'russian',
  arb: 'arabic',
  pes_1: 'arabic',
  urd: 'arabic',
  heb: 'hebrew',
  hin: 'hindi',
  tha: 'thai',
};

/** Kind of a udhr language key (`script:<key>` for languages without a main kind). */
export function udhrKind(key: string): TextKind {
  return UDHR_KIND[key] ?? `script:${key}`;
}

/** The udhr language keys, from index.json of `dataDir` (default: the fixtures). */
export function udhrKeys(dataDir: string = fixtureDataDir()): string[] {
  return (JSON.parse(read(dataDir, 'text-udhr/index.json')) as Array<{ key: string }>).map((e) => e.key);
}

/** The paragraphs of the UDHR in language `key` (index.json key), in order. */
export function udhrParagraphs(dataDir: string, key: string): string[] {
  return read(dataDir, `text-udhr/udhr_${key}.txt`)
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter(Boolean);
}

/** Groups consecutive paragraphs into messages of at least `target` characters. */
function groupParagraphs(paragraphs: string[], target: number): string[] {
  const out: string[] = [];
  let current: string[] = [];
  let length = 0;
  for (const p of paragraphs) {
    current.push(p);
    length += p.length + 2;
    if (length >= target) {
      out.push(current.join('\n\n'));
      current = [];
      length = 0;
    }
  }
  if (current.length) out.push(current.join('\n\n'));
  return out;
}

/** Splits a text into pieces of at most `max` characters at line breaks (hard cut if a line is longer). */
function splitAtLines(text: string, max: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + max);
    if (end < text.length) {
      const nl = text.lastIndexOf('\n', end);
      if (nl > start + max / 4) end = nl + 1;
    }
    out.push(text.slice(start, end));
    start = end;
  }
  return out;
}

interface MtBench {
  id: number;
  history: Array<{ user: string; bot: string }>;
}
interface ArenaAnswer {
  uid: string;
  messages: Array<{ role: string; content: string | { answer: string } }>;
}
interface Oasst {
  instruction: string;
  input: string;
  output: string;
  history: Array<[string, string]>;
}
interface PgPage {
  id: string;
  text: string;
}

const FENCE = /```/;

/** Emoji sequences of the emoji test file of `dataDir` (fully-qualified only), in file order. */
export function emojiSequences(dataDir: string = fixtureDataDir()): string[] {
  const out: string[] = [];
  for (const line of read(dataDir, 'text-unicode-emoji/emoji-test.txt').split('\n')) {
    const m = /^([0-9A-F ]+?)\s*; fully-qualified\s*#/.exec(line);
    if (m)
      out.push(
        String.fromCodePoint(
          ...m[1]
            .trim()
            .split(/\s+/)
            .map((h) => parseInt(h, 16)),
        ),
      );
  }
  return out;
}

function pgPages(dataDir: string, limitChars: number): PgPage[] {
  const pages: PgPage[] = [];
  let total = 0;
  for (const page of jsonl<PgPage>(dataDir, 'kb-postgresql-15-docs/postgresql-15-docs.jsonl')) {
    if (page.id === 'bookindex') continue;
    pages.push(page);
    total += page.text.length;
    if (total >= limitChars) break;
  }
  return pages;
}

/** Prose and code pieces of the PostgreSQL manual (code = fenced blocks). */
function pgPieces(dataDir: string, limitChars: number): { prose: string[]; code: string[] } {
  const prose: string[] = [];
  const code: string[] = [];
  for (const page of pgPages(dataDir, limitChars)) {
    const parts = page.text.split('```');
    parts.forEach((part, i) => {
      const text = part.trim();
      if (!text) return;
      (i % 2 === 1 ? code : prose).push(...splitAtLines(text, 3000));
    });
  }
  return { prose, code };
}

/** Options that bound how much of the data is read (the unit suite reads less than the bench). */
export interface CorpusOptions {
  /** The data folder (the benches pass the full data sets); default: the fixtures, {@link fixtureDataDir}. */
  dataDir?: string;
  /** Characters of the PostgreSQL manual to read; default 1,500,000. */
  pgChars?: number;
}

/**
 * Every real message, labelled: mt-bench turns (english), arena-hard prompts and answers (english, or
 * code when fenced), oasst1-zh turns (chinese), the PostgreSQL manual's prose (english) and code blocks
 * (code, grouped), raw JSONL lines (json), udhr paragraphs grouped to ≥200 and ≥800 characters, and
 * emoji-test lines and emoji-only sequences (emoji).
 */
export function corpusMessages(options: CorpusOptions = {}): CorpusMessage[] {
  const dataDir = options.dataDir ?? fixtureDataDir();
  const out: CorpusMessage[] = [];
  const add = (source: string, dataSet: CorpusDataSet, kind: TextKind, text: string, language?: string) => {
    if (text.trim().length > 0)
      out.push({ id: `${source}:${out.length}`, kind, text, dataSet, ...(language ? { language } : {}) });
  };
  for (const d of jsonl<MtBench>(dataDir, 'mt-bench-101/mtbench101.jsonl')) {
    for (const t of d.history) {
      add('mtbench', 'mt-bench-101', 'english', t.user);
      add('mtbench', 'mt-bench-101', 'english', t.bot);
    }
  }
  for (const a of jsonl<ArenaAnswer>(dataDir, 'arena-hard-en/model_answer_gpt-4-0314_v0.1.jsonl')) {
    for (const m of a.messages) {
      const text = typeof m.content === 'string' ? m.content : m.content.answer;
      add('arena', 'arena-hard-en', FENCE.test(text) ? 'code' : 'english', text);
    }
  }
  for (const r of JSON.parse(read(dataDir, 'oasst1-zh/oaast_sft_zh.json')) as Oasst[]) {
    for (const [q, a] of r.history) {
      add('oasst', 'oasst1-zh', 'chinese', q);
      add('oasst', 'oasst1-zh', 'chinese', a);
    }
    add('oasst', 'oasst1-zh', 'chinese', r.input ? `${r.instruction}\n${r.input}` : r.instruction);
    add('oasst', 'oasst1-zh', 'chinese', r.output);
  }
  const pg = pgPieces(dataDir, options.pgChars ?? 1_500_000);
  for (const p of groupParagraphs(pg.prose, 1200)) add('pgdocs', 'kb-postgresql-15-docs', 'english', p);
  for (const c of groupParagraphs(pg.code, 600)) add('pgcode', 'kb-postgresql-15-docs', 'code', c);
  const rawLines: Array<[CorpusDataSet, string[]]> = [
    ['mt-bench-101', read(dataDir, 'mt-bench-101/mtbench101.jsonl').split('\n').slice(0, 600)],
    ['arena-hard-en', read(dataDir, 'arena-hard-en/question_v0.1.jsonl').split('\n')],
    ['kb-postgresql-15-docs', read(dataDir, 'kb-postgresql-15-docs/postgresql-15-docs.jsonl').split('\n').slice(0, 40)],
  ];
  for (const [dataSet, lines] of rawLines)
    for (const line of lines.filter(Boolean))
      for (const piece of splitAtLines(line, 4000)) add('json', dataSet, 'json', piece);
  for (const key of udhrKeys(dataDir)) {
    const paragraphs = udhrParagraphs(dataDir, key);
    for (const target of [200, 800])
      for (const m of groupParagraphs(paragraphs, target)) add(`udhr-${key}`, 'text-udhr', udhrKind(key), m, key);
  }
  const emojiLines = read(dataDir, 'text-unicode-emoji/emoji-test.txt')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'));
  for (let i = 0; i < emojiLines.length; i += 12)
    add('emoji-test', 'text-unicode-emoji', 'emoji', emojiLines.slice(i, i + 12).join('\n'));
  const seqs = emojiSequences(dataDir);
  for (let i = 0; i < seqs.length; i += 40) {
    const chunk = seqs.slice(i, i + 40);
    add('emoji-seq', 'text-unicode-emoji', 'emoji', chunk.join(''));
    add('emoji-words', 'text-unicode-emoji', 'emoji', chunk.join(' '));
  }
  return out;
}

/**
 * Long multi-turn sessions per kind, for packing: consecutive mt-bench dialogues, oasst threads,
 * arena prompt/answer pairs, udhr paragraphs as alternating question/answer turns, and emoji lines.
 * Each session is long enough that an 8K window has to trim it.
 */
export function corpusSessions(options: Pick<CorpusOptions, 'dataDir'> = {}): CorpusSession[] {
  const dataDir = options.dataDir ?? fixtureDataDir();
  const sessions: CorpusSession[] = [];
  const chunked = (
    id: string,
    dataSet: CorpusDataSet,
    kind: TextKind,
    turns: Turn[],
    perSession: number,
    language?: string,
  ) => {
    for (let i = 0; i < turns.length; i += perSession) {
      const slice = turns.slice(i, i + perSession);
      if (slice.length >= 2)
        sessions.push({ id: `${id}:${i}`, kind, turns: slice, dataSet, ...(language ? { language } : {}) });
    }
  };
  const mt: Turn[] = [];
  for (const d of jsonl<MtBench>(dataDir, 'mt-bench-101/mtbench101.jsonl'))
    for (const t of d.history) mt.push({ question: t.user, answer: t.bot });
  chunked('mtbench', 'mt-bench-101', 'english', mt, 40);
  const arena: Turn[] = [];
  for (const a of jsonl<ArenaAnswer>(dataDir, 'arena-hard-en/model_answer_gpt-4-0314_v0.1.jsonl')) {
    const [q, ans] = a.messages.map((m) => (typeof m.content === 'string' ? m.content : m.content.answer));
    if (q && ans) arena.push({ question: q, answer: ans });
  }
  chunked('arena', 'arena-hard-en', 'code', arena, 12);
  const zh: Turn[] = [];
  for (const r of JSON.parse(read(dataDir, 'oasst1-zh/oaast_sft_zh.json')) as Oasst[]) {
    for (const [q, a] of r.history) zh.push({ question: q, answer: a });
    zh.push({ question: r.input ? `${r.instruction}\n${r.input}` : r.instruction, answer: r.output });
  }
  chunked('oasst', 'oasst1-zh', 'chinese', zh, 30);
  for (const key of udhrKeys(dataDir)) {
    const ps = udhrParagraphs(dataDir, key);
    const turns: Turn[] = [];
    for (let i = 0; i + 1 < ps.length; i += 2) turns.push({ question: ps[i], answer: ps[i + 1] });
    chunked(`udhr-${key}`, 'text-udhr', udhrKind(key), turns, 1000, key);
  }
  const lines = read(dataDir, 'text-unicode-emoji/emoji-test.txt')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'));
  const seqs = emojiSequences(dataDir);
  const emojiTurns: Turn[] = [];
  for (let i = 0; i + 40 < seqs.length; i += 40) {
    emojiTurns.push({ question: seqs.slice(i, i + 20).join(''), answer: lines.slice(i, i + 20).join('\n') });
  }
  chunked('emoji', 'text-unicode-emoji', 'emoji', emojiTurns, 1000);
  return sessions;
}

/** A seeded sample of at most `n` items, in the original order. */
export function sample<T>(items: readonly T[], n: number, seed: number): T[] {
  if (items.length <= n) return [...items];
  const random = seededRandom(seed);
  const idx = items.map((_, i) => i);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [idx[i], idx[j]] = [idx[j], idx[i]];
  }
  return idx
    .slice(0, n)
    .sort((a, b) => a - b)
    .map((i) => items[i]);
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const HEX = '0123456789abcdef';

/**
 * Pathological runs, generated (seeded) around sentences of real English: base64 blobs, hex hashes and
 * UUIDs, long digit runs and tables of numbers, and URLs (the real oasst1-zh Wikipedia links with
 * percent-encoded Chinese, plus query strings). Not "real messages": the bench reports them apart, and
 * the rate derivation uses them so these classes have measured rates of their own.
 */
export function pathologicalMessages(count = 600, seed = 7, dataDir: string = fixtureDataDir()): CorpusMessage[] {
  const random = seededRandom(seed);
  const pick = (alphabet: string, n: number) => {
    let s = '';
    for (let i = 0; i < n; i++) s += alphabet[Math.floor(random() * alphabet.length)];
    return s;
  };
  const prose = jsonl<MtBench>(dataDir, 'mt-bench-101/mtbench101.jsonl')
    .slice(0, 400)
    .map((d) => d.history[0].user);
  const urls = Array.from(
    read(dataDir, 'oasst1-zh/oaast_sft_zh.json').matchAll(/https?:\/\/[^\s"\\）)，。]+/g),
    (m) => m[0],
  );
  const out: CorpusMessage[] = [];
  for (let i = 0; i < count; i++) {
    const sentence = prose[Math.floor(random() * prose.length)];
    let run: string;
    switch (i % 6) {
      case 0:
        run = pick(B64, 24 + Math.floor(random() * 600)) + '==';
        break;
      case 1:
        run = Array.from({ length: 1 + Math.floor(random() * 8) }, () => pick(HEX, 64)).join('\n');
        break;
      case 2:
        run = Array.from({ length: 2 + Math.floor(random() * 10) }, () =>
          [8, 4, 4, 4, 12].map((n) => pick(HEX, n)).join('-'),
        ).join(', ');
        break;
      case 3:
        run = pick('0123456789', 7 + Math.floor(random() * 200));
        break;
      case 4:
        run = Array.from({ length: 4 + Math.floor(random() * 40) }, () =>
          pick('0123456789', 1 + Math.floor(random() * 9)),
        ).join(random() < 0.5 ? ', ' : ' | ');
        break;
      default: {
        const base = urls.length ? urls[Math.floor(random() * urls.length)] : 'https://example.com/path';
        run = `${base}?utm_source=${pick(B64.slice(0, 62), 8)}&id=${pick('0123456789', 12)} and ${
          urls.length ? urls[Math.floor(random() * urls.length)] : base
        }`;
      }
    }
    out.push({
      id: `pathological:${i}`,
      kind: 'pathological',
      dataSet: 'generated',
      text: `${sentence}\n${run}\n${sentence}`,
    });
  }
  return out;
}

/**
 * The fenced code blocks of the arena-hard-en answers (GPT-4's, a held-out data set), in file order,
 * each cut to at most `max` characters at a line break; blocks under 80 characters are skipped.
 */
export function arenaCodeBlocks(dataDir: string = fixtureDataDir(), max = 900): string[] {
  const out: string[] = [];
  for (const a of jsonl<ArenaAnswer>(dataDir, 'arena-hard-en/model_answer_gpt-4-0314_v0.1.jsonl'))
    for (const m of a.messages) {
      const text = typeof m.content === 'string' ? m.content : m.content.answer;
      text.split('```').forEach((part, i) => {
        // An odd part is inside a fence; its first line is the language tag.
        if (i % 2 === 0) return;
        const code = part.slice(part.indexOf('\n') + 1).trim();
        if (code.length >= 80) out.push(splitAtLines(code, max)[0].trimEnd());
      });
    }
  return out;
}

/**
 * Mixed-script sessions, one per UDHR language of `languages`: its paragraphs as question/answer
 * turns (as {@link corpusSessions} builds them), each answer followed by a fenced code block of the
 * arena-hard-en answers ({@link arenaCodeBlocks}, the session's blocks taken in turn) and each
 * question ending with that block's first line as an inline term in backticks: text of one script
 * carrying Latin code and identifiers, as technical answers in Korean, Japanese or Russian do.
 * Sessions keep `dataSet` text-udhr and `language`, so `isHeldOut` reads their language's split
 * (the code is held out whole: arena-hard-en).
 */
export function mixedScriptSessions(languages: readonly string[], dataDir: string = fixtureDataDir()): CorpusSession[] {
  const code = arenaCodeBlocks(dataDir);
  return languages.map((key, n) => {
    const ps = udhrParagraphs(dataDir, key);
    const turns: Turn[] = [];
    for (let i = 0; i + 1 < ps.length; i += 2) {
      const block = code[(n * 97 + turns.length) % code.length];
      const term = block.split('\n')[0].trim().slice(0, 60);
      turns.push({ question: `${ps[i]} \`${term}\``, answer: `${ps[i + 1]}\n\n\`\`\`\n${block}\n\`\`\`` });
    }
    return { id: `mixed-${key}`, kind: udhrKind(key), turns, dataSet: 'text-udhr' as const, language: key };
  });
}

/**
 * English knowledge chunks: the prose of the PostgreSQL manual's first pages (a fit-set data set of
 * the rates), grouped to about `chars` characters each, in page order, at most `count` of them.
 */
export function knowledgeChunks(dataDir: string = fixtureDataDir(), count = 400, chars = 1600): string[] {
  const { prose } = pgPieces(dataDir, count * chars * 2);
  return groupParagraphs(
    prose.flatMap((p) => splitAtLines(p, chars)),
    chars,
  )
    .map((c) => splitAtLines(c, chars)[0])
    .slice(0, count);
}
