/**
 * The quotable units of the stand-in's context passages: sentences, the code block, list or table a
 * sentence introduces, headings, front matter and table rows told apart from prose.
 */

/** One retrieved item as found in the prompt's context block. */
export interface ContextPassage {
  index: number;
  title: string;
  score: number;
  text: string;
}

/**
 * A quotable sentence of a passage, with the code block or the list it introduces when one follows it,
 * and the sentence right after it in the passage when that one explains it ("This means that …").
 */
export interface Candidate {
  sentence: string;
  code?: { lang: string; lines: string[] };
  list?: string[];
  explained?: string;
  passage: ContextPassage;
  order: number;
}

/** Lines of a code block quoted under its sentence. */
const MAX_CODE_LINES = 12;

/**
 * The passage's quotable sentences: prose split into sentences (one line each, without list markers
 * or heading hashes), each sentence that ends right before a fenced code block carrying that block,
 * and a sentence ending in a colon right before a list carrying the list's items (at most
 * {@link MAX_LIST_ITEMS}; they are then not quoted on their own). A sentence that explains the one
 * before it (it opens with "This means", "That is", "In other words", "i.e.") rides with it as
 * `explained`. A fence cut by the chunk boundary (an unmatched ```) is treated as code up to the
 * passage's edge.
 */
export function quotable(passage: ContextPassage): Array<Omit<Candidate, 'order'>> {
  const out: Array<Omit<Candidate, 'order'>> = [];
  // A page's YAML front matter (`---` lines around `title: …`) is metadata, not prose.
  const text = passage.text.replace(/^---[ \t]*\n[\s\S]*?\n---[ \t]*(?:\n|$)/, '');
  const parts = text.split(/^[ \t]*```/m);
  const startsInCode = startsInsideFence(text, parts);
  for (let i = 0; i < parts.length; i++) {
    const isCode = (i % 2 === 1) !== startsInCode;
    if (isCode) continue;
    const units = proseUnits(parts[i]);
    for (const [j, unit] of units.entries()) {
      const next = parts[i + 1];
      const { sentence } = unit;
      // A sentence ending in a colon, or a short caption ("Register the types for a client"), right
      // before a code block introduces it.
      const introducesCode =
        j === units.length - 1 &&
        !unit.list &&
        next !== undefined &&
        (/[:：]$/.test(sentence) || sentence.length <= 80);
      // A heading says what follows, not the answer; as a caption of code it is kept.
      if (!introducesCode && isHeading(sentence)) continue;
      const following = units[j + 1];
      const explained = following && !unit.list && EXPLAINS.test(following.sentence) ? following.sentence : undefined;
      out.push({
        sentence,
        passage,
        ...(unit.list ? { list: unit.list } : {}),
        ...(explained ? { explained } : {}),
        ...(introducesCode ? { code: codeBlock(next) } : {}),
      });
    }
  }
  return out;
}

/**
 * Whether a chunk starts inside a fenced code block, so that its odd parts (split on fence lines) are
 * prose and its even parts code. By the fences: an odd number of fence lines whose first is bare (a
 * closing fence; an opening one usually names its language), unless the other reading is the only one
 * in which no closing fence names a language (a closing fence cannot). A chunk cut inside code at both ends
 * has an even number, and documentation whose fences are all bare gives no sign either; so the reading
 * that yields more prose sentences ({@link proseSentences}) wins over the fences' when it yields more.
 */
function startsInsideFence(text: string, parts: readonly string[]): boolean {
  const fences = text.match(/^[ \t]*```.*$/gm) ?? [];
  if (fences.length === 0) return false;
  // A closing fence carries no info string (CommonMark 0.31, "Fenced code blocks"): a reading that
  // would close a block on a fence naming a language is impossible.
  const named = (fence: string) => !/^[ \t]*```[ \t]*$/.test(fence);
  const closesNamed = (inside: boolean) => fences.some((f, i) => i % 2 === (inside ? 0 : 1) && named(f));
  if (closesNamed(true) !== closesNamed(false)) return closesNamed(false);
  const byFences = fences.length % 2 === 1 && /^[ \t]*```[ \t]*$/.test(fences[0] ?? '');
  const prose = (inside: boolean) =>
    parts.reduce((n, part, i) => ((i % 2 === 1) !== inside ? n : n + proseSentences(part).length), 0);
  return prose(!byFences) > prose(byFences) ? !byFences : byFences;
}

/** A paragraph that is a table row: cells split by ` | ` (two or more). */
const isTableRow = (block: string) => (block.match(/ \| /g) ?? []).length >= 2;

/**
 * The passages with each table cut by a chunk boundary made whole again from the page's next chunk,
 * when both were retrieved: a passage that ends in table rows gets the rows that another passage of
 * the same title opens with after the ones they share (consecutive chunks overlap), so the sentence
 * naming the table carries all of its rows. Other passages are returned as they are. Linear in the
 * passages' text for each pair of passages with one title.
 */
export function continueTables(passages: readonly ContextPassage[]): ContextPassage[] {
  const blocks = (text: string) =>
    text
      .trim()
      .split(/\n[ \t]*\n/)
      .map((b) => b.trim());
  return passages.map((passage) => {
    const own = blocks(passage.text);
    let tail = own.length;
    while (tail > 0 && isTableRow(own[tail - 1])) tail--;
    if (tail === own.length) return passage;
    const rows = own.slice(tail);
    for (const other of passages) {
      if (other === passage || other.title !== passage.title) continue;
      const next = blocks(other.text);
      let lead = 0;
      while (lead < next.length && isTableRow(next[lead])) lead++;
      // The other chunk opens with rows, the first of them one of this chunk's last rows.
      const shared = rows.indexOf(next[0]);
      if (lead === 0 || shared < 0) continue;
      const overlap = rows.length - shared;
      if (next.slice(0, overlap).some((row, i) => row !== rows[shared + i]) || lead <= overlap) continue;
      return { ...passage, text: [passage.text.trimEnd(), ...next.slice(overlap, lead)].join('\n\n') };
    }
    return passage;
  });
}

/**
 * A line that reads as a heading ("Setting up a Partial Index to Exclude Common Values", "The Rules of
 * References"): no closing punctuation, at most 100 characters, and most of its words of four letters
 * or more capitalised.
 */
export function isHeading(line: string): boolean {
  if (line.length > 100 || /[.!?:;。！？]$/.test(line)) return false;
  const long = line.split(' ').filter((w) => /^\p{L}{4,}/u.test(w));
  return long.length > 0 && long.filter((w) => /^\p{Lu}/u.test(w)).length >= 0.6 * long.length;
}

/** A sentence that explains the sentence before it, so it is quoted with that one. */
const EXPLAINS = /^(?:This|That) means\b|^That is\b|^In other words\b|^I\.e\.|^Put simply\b/;

/** Items of a list quoted under the sentence that introduces it. */
const MAX_LIST_ITEMS = 8;

/** Characters of one quoted list item. */
const MAX_LIST_ITEM_CHARS = 160;

/**
 * The quotable units of a prose part in order: its sentences ({@link proseSentences}), a sentence
 * ending in a colon that is followed by list items (`- `, `* `, `+ `, `1. `) carrying them as `list`,
 * and one ending in a colon or naming a table followed by table rows (cells split by ` | `, after a
 * caption or not) carrying the rows the same way.
 */
function proseUnits(text: string): Array<{ sentence: string; list?: string[] }> {
  const out: Array<{ sentence: string; list?: string[] }> = [];
  // Paragraphs and list items, each a block: blank lines and a line opening a list item start a new one.
  const blocks = text.split(/\n[ \t]*\n|\n(?=[ \t]*(?:[-*+]|\d+\.)[ \t])/);
  let introducer: { sentence: string; list?: string[] } | null = null;
  let tableIntro: { sentence: string; list?: string[] } | null = null;
  for (const block of blocks) {
    const isItem = /^\s*(?:[-*+]|\d+\.)[ \t]/.test(block);
    const isRow = (block.match(/ \| /g) ?? []).length >= 2;
    const into = isItem ? introducer : isRow ? tableIntro : null;
    if (into) {
      const item = truncate(readable(isRow ? block.replace(/\s+\|\s+/g, ' | ') : block), MAX_LIST_ITEM_CHARS);
      if (item && (into.list ??= []).length < MAX_LIST_ITEMS) into.list.push(item);
      continue;
    }
    introducer = null;
    const sentences = proseSentences(block);
    for (const sentence of sentences) out.push({ sentence });
    const last = out[out.length - 1];
    if (!isItem && sentences.length && /[:：]$/.test(last.sentence)) introducer = last;
    // A table's rows ride with the sentence before it that ends in a colon or names a table, across
    // the table's caption ("Table 13.1. …", a heading).
    if (
      sentences.length &&
      (/[:：]$/.test(last.sentence) || /\btable\b/i.test(last.sentence)) &&
      !isHeading(last.sentence)
    )
      tableIntro = last;
    else if (sentences.length > 1 || (sentences.length === 1 && !isHeading(sentences[0]))) tableIntro = null;
  }
  return out;
}

function codeBlock(raw: string): { lang: string; lines: string[] } {
  const [first, ...rest] = raw.split('\n');
  const lines = rest.join('\n').replace(/\s+$/, '').split('\n');
  const kept = lines.slice(0, MAX_CODE_LINES);
  if (lines.length > MAX_CODE_LINES) kept.push('// …');
  return { lang: first.trim().split(/\s/)[0] ?? '', lines: kept };
}

/**
 * Sentences of a prose part that read as prose: markup removed, at least four words, mostly letters,
 * not a table row (cells split by ` | `).
 */
function proseSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?。！？])\s+|\n{2,}|\n(?=[ \t]*(?:[-*+]|#{1,6}|\d+\.)[ \t])/u)
    .filter((s) => (s.match(/\]\(/g) ?? []).length < 3 && !/^\s*\|/.test(s) && (s.match(/ \| /g) ?? []).length < 2)
    .map((s) => readable(s))
    .filter((s) => s.length >= 20 && s.split(' ').length >= 4 && letterShare(s) >= 0.7);
}

/** One line of text without Markdown/HTML markup: images dropped, links kept as their text. */
function readable(text: string): string {
  return (
    text
      .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]*>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      // The answer adds its own list markers.
      .replace(/^(?:[-*+]|#{1,6}|\d+\.)\s+/, '')
  );
}

const LETTER_OR_SPACE = /^[\p{L}\s]$/u;

/**
 * Share of letters (and spaces) among the characters: code, stack traces and tables score low. The
 * code points of `[\p{L}\s]` over the UTF-16 length; ASCII decided by character code, the rest by the
 * regex (the same figure as matching the whole text with it, without building the array of matches).
 */
export function letterShare(text: string): number {
  let letters = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x20 || (c >= 0x09 && c <= 0x0d)) letters++;
      continue;
    }
    const cp = text.codePointAt(i) ?? c;
    if (cp > 0xffff) i++;
    if (LETTER_OR_SPACE.test(String.fromCodePoint(cp))) letters++;
  }
  return letters / text.length;
}

export function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}
