/** One text to summarise, with the label its kept sentences are grouped under (`Q`, `A`, `Earlier`). */
export interface ExtractiveSource {
  label: string;
  text: string;
  /** Added to every sentence's score (a previous summary's sentences already won once). */
  bonus?: number;
}

const STOPWORDS = new Set(
  (
    'a an and are as at be by can could do does did for from had has have how i if in into is it its of on or our so ' +
    'that the their then there these they this those to was we were what when where which who why will with would you your ' +
    "me my not no yes also just about than more most some any all one can't don't it's i'm let's please thanks thank " +
    'here sure okay ok well very much many such like been being'
  ).split(' '),
);

/** Hard cap on sentences considered per source, so the work is bounded by the input's size. */
const MAX_SENTENCES = 400;

/** Splits a text into sentences: at `.`, `!`, `?` (and their CJK forms) followed by space, and at line breaks. */
export function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?。！？])\s+|\n+/u)
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => s.length > 0)
    .slice(0, MAX_SENTENCES);
}

/**
 * How informative a sentence is, for keeping names, numbers, decisions and open questions:
 * each number 3, each capitalised word not opening the sentence 2, each distinct content word 1
 * (single letters other than digits count for nothing),
 * a question mark 2, a decision word (decided, chose, will, must, agreed…) 2; divided by the square
 * root of the word count so that a long sentence does not win by length alone.
 */
export function sentenceScore(sentence: string): number {
  const words = sentence.split(/\s+/).filter(Boolean);
  if (words.length === 0) return 0;
  let score = 0;
  const seen = new Set<string>();
  words.forEach((raw, i) => {
    const word = raw.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    // A lone letter (A, B, x) names nothing and carries no content.
    if (!word || (word.length === 1 && !/\p{N}/u.test(word))) return;
    if (/\p{N}/u.test(word)) score += 3;
    else if (i > 0 && /^\p{Lu}/u.test(word)) score += 2;
    const lower = word.toLowerCase();
    if (!STOPWORDS.has(lower) && !seen.has(lower)) {
      seen.add(lower);
      score += 1;
    }
    if (
      /^(decided|decide|chose|chosen|choose|agreed|agree|will|must|should|selected|picked|prefer|named|called)$/.test(
        lower,
      )
    )
      score += 2;
  });
  if (sentence.includes('?')) score += 2;
  return score / Math.sqrt(words.length);
}

/**
 * A deterministic extractive summary (the summariser of the local stand-in and of `extractive`):
 * the most informative sentences of the sources ({@link sentenceScore} + each source's bonus) that
 * fit `maxTokens` together, kept in their original order and grouped under their source's label
 * (`Q: … A: …`); a sentence repeated is kept once. A sentence alone longer than the budget is cut at
 * a word boundary to fit. Ties go to the earlier sentence. Same input, same output.
 *
 * @param countText tokens of a text under the planning counter (the budget's unit).
 * @param maxTokens length budget in tokens (≥ 1).
 * @returns the summary, or '' when the sources hold no text.
 */
export function extractiveSummary(
  sources: readonly ExtractiveSource[],
  maxTokens: number,
  countText: (text: string) => number,
): string {
  // A sentence said twice is kept once (its first occurrence).
  const seen = new Set<string>();
  const sentences = sources.flatMap((source, s) =>
    splitSentences(source.text)
      .map((text, i) => ({ source: s, order: i, text, score: sentenceScore(text) + (source.bonus ?? 0) }))
      .filter((x) => !seen.has(x.text) && seen.add(x.text)),
  );
  if (sentences.length === 0) return '';
  const ranked = [...sentences].sort((a, b) => b.score - a.score || a.source - b.source || a.order - b.order);
  const kept = new Set<(typeof sentences)[number]>();
  const render = (set: Set<(typeof sentences)[number]>) =>
    sources
      .map((source, s) => {
        const mine = sentences.filter((x) => x.source === s && set.has(x));
        return mine.length ? `${source.label ? `${source.label}: ` : ''}${mine.map((x) => x.text).join(' ')}` : '';
      })
      .filter(Boolean)
      .join(' ');
  // Each sentence is counted once; the chosen set is counted whole at the end and trimmed (lowest
  // ranked first) until it fits, so the work stays linear in the number of sentences.
  let used = 0;
  const labels = new Set<number>();
  const chosen: Array<(typeof sentences)[number]> = [];
  for (const sentence of ranked) {
    const label = sources[sentence.source].label;
    const cost =
      countText(sentence.text) + 1 + (labels.has(sentence.source) || !label ? 0 : countText(`${label}:`) + 1);
    if (used + cost > maxTokens) continue;
    used += cost;
    labels.add(sentence.source);
    chosen.push(sentence);
    kept.add(sentence);
  }
  while (kept.size > 0 && countText(render(kept)) > maxTokens) kept.delete(chosen.pop() as (typeof sentences)[number]);
  if (kept.size > 0) return render(kept);
  // Not even the best sentence fits: cut it to the budget, word by word from its start.
  const best = ranked[0];
  const words = best.text.split(' ');
  const prefix = sources[best.source].label ? `${sources[best.source].label}: ` : '';
  let cut = '';
  for (const word of words) {
    const next = cut ? `${cut} ${word}` : word;
    if (countText(`${prefix}${next}`) > maxTokens) break;
    cut = next;
  }
  if (cut) return `${prefix}${cut}`;
  // Its first word alone is over the budget (Thai, Japanese, Chinese: no spaces): cut by characters.
  const head = cutToTokens(`${prefix}${best.text}`, maxTokens, countText);
  return head.length > prefix.trim().length ? head : '';
}

/**
 * The longest head of `text` (whole code points) that `countText` counts at most `maxTokens`,
 * ending at the last space when that keeps at least 60% of it; trimmed. The text itself when it
 * fits; '' when not even one character does. A binary search: about log₂(length) counts of the text.
 *
 * @param countText tokens of a text under the planning counter (the budget's unit).
 */
export function cutToTokens(text: string, maxTokens: number, countText: (text: string) => number): string {
  if (countText(text) <= maxTokens) return text.trim();
  const chars = Array.from(text);
  let lo = 0;
  let hi = chars.length - 1;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (countText(chars.slice(0, mid).join('')) <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  const head = chars.slice(0, lo).join('');
  const space = head.search(/\s\S*$/u);
  return (space >= 0.6 * head.length ? head.slice(0, space) : head).trim();
}
