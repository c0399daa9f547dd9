/** The stand-in's keywords: words without stopwords, a crude stem, compounds and question parts. */

const STOPWORDS = new Set(
  'a an and are as at be by can do does for from how i in is it of on or that the this to what when where which who why with you your me my we our use using get set'.split(
    ' ',
  ),
);

/** The text's words in order, lower-cased, without stopwords and one-letter words, not stemmed. */
function wordList(text: string): string[] {
  return text
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
 * The parts of a question that asks two things ("How do I create an index, and which types are
 * there?"): split before a second question word that follows a comma or an "and". One part otherwise.
 */
export function questionParts(question: string): string[] {
  return question
    .split(
      /,\s*(?:and\s+|or\s+)?(?=(?:how|what|which|why|when|where|who|whether)\b)|\s+and\s+(?=(?:how|what|which|why|when|where|who|whether)\b)/i,
    )
    .map((p) => p.trim())
    .filter((p) => keywordList(p).length > 0);
}
