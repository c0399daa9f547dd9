/** The stand-in's keywords: words without stopwords, a crude stem, compounds and question parts. */

const STOPWORDS = new Set(
  'a an and are as at be by can do does for from how i in is it of on or that the this to what when where which who why with you your me my we our use using get set'.split(
    ' ',
  ),
);

/**
 * A numbered reference to a part of the document ("Table 13.1", "Section 27.2.8", "Chapter 8"): it
 * points elsewhere and says nothing of the sentence's topic ("see Table 9.46" is not about tables).
 */
const REFERENCE = /\b(?:table|figure|section|chapter|example|appendix|part)\s+[A-Z]?\d+(?:\.\d+)*\b/gi;

/** The text's words in order, lower-cased, without stopwords, one-letter words and numbered references ({@link REFERENCE}), not stemmed. */
function wordList(text: string): string[] {
  return text
    .replace(REFERENCE, ' ')
    .toLowerCase()
    .normalize('NFKC')
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((w) => w.length > 1 && !STOPWORDS.has(w));
}

/**
 * The text's keywords in order (stemmed, without stopwords and one-letter words), repeats kept. With
 * `compounds` (two adjacent words of the question written as one, {@link questionCompounds}), a word
 * that holds one (`pg_basebackup` holds "base backup", `autovacuum` "auto vacuum") also yields the two
 * (`onlyParts`: yields the two instead).
 */
export function keywordList(text: string, compounds: readonly Compound[] = [], onlyParts = false): string[] {
  const out: string[] = [];
  for (const word of wordList(text)) {
    const held = compounds.filter((c) => word.includes(c.joined));
    if (!(onlyParts && held.length)) out.push(stem(word));
    for (const c of held) out.push(c.first, c.second);
  }
  return out;
}

/** Two adjacent words of the question as one word (`joined`), with their stems. */
export interface Compound {
  joined: string;
  first: string;
  second: string;
}

/** The question's adjacent word pairs of three letters or more each, joined as identifiers join them. */
export function questionCompounds(question: string): Compound[] {
  const words = wordList(question);
  return words
    .slice(1)
    .map((b, j) => [words[j], b] as const)
    .filter(([a, b]) => a.length >= 3 && b.length >= 3)
    .map(([a, b]) => ({ joined: `${a}${b}`, first: stem(a), second: stem(b) }));
}

export function keywords(text: string): Set<string> {
  return new Set(keywordList(text));
}

/** Each pair of adjacent keywords of a {@link keywordList} (stopwords already skipped), as `"a b"`. */
export function adjacentPairs(list: readonly string[]): Set<string> {
  return new Set(list.slice(1).map((b, j) => `${list[j]} ${b}`));
}

/**
 * A crude English stem, so `jobs` matches `job`, `indexes` matches `index` and `deciding` matches
 * `decide`: plural `ies`/`es`/`s`, then `ing` or `ed`, then a final `e` are cut (never below three letters).
 */
export function stem(word: string): string {
  let w = word;
  if (w.length > 4 && w.endsWith('ies')) w = `${w.slice(0, -3)}y`;
  else if (w.length > 4 && /(?:x|ch|sh|ss)es$/.test(w)) w = w.slice(0, -2);
  else if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith('ing')) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith('ed') && !w.endsWith('eed')) w = w.slice(0, -2);
  if (w.length > 3 && w.endsWith('e') && !w.endsWith('ee')) w = w.slice(0, -1);
  return w;
}

/**
 * A question (or part) asking how to do something: "How do I …", "How can we …", "BullMQ: how do I
 * …", "how to …".
 */
export const HOW_TO = /^(?:[^,:?]{0,40}[:,]\s*)?how (?:do|can|should|would|could|to)\b(?: (?:i|you|we|one)\b)?/i;

/**
 * The parts of a question that asks two things ("How do I create an index, and which types are
 * there?"): split before a second question word that follows a comma or an "and"; and a part asking
 * how to do two things ({@link HOW_TO}: "How do I take a base backup and restore it with
 * point-in-time recovery?") split at an "and" ({@link splitSteps}). One part otherwise.
 */
export function questionParts(question: string): string[] {
  return question
    .split(
      /,\s*(?:and\s+|or\s+)?(?=(?:how|what|which|why|when|where|who|whether)\b)|\s+and\s+(?=(?:how|what|which|why|when|where|who|whether)\b)/i,
    )
    .map((p) => p.trim())
    .flatMap((p) => (HOW_TO.test(p) ? splitSteps(p) : [p]))
    .filter((p) => keywordList(p).length > 0);
}

/**
 * A how-to part cut at its first " and " that leaves at least two keywords before it and three after
 * it (so "development and release builds" and "a host, port and password" stay one); else the part.
 */
function splitSteps(part: string): string[] {
  const words = (text: string) => keywordList(text.replace(HOW_TO, '')).length;
  for (const m of part.matchAll(/\s+and\s+/gi)) {
    const left = part.slice(0, m.index);
    const right = part.slice((m.index ?? 0) + m[0].length);
    if (words(left) >= 2 && words(right) >= 3) return [left.trim(), right.trim()];
  }
  return [part];
}
