/** One text to summarise, with the label its kept sentences are grouped under (`Q`, `A`, `Earlier`). */
export interface ExtractiveSource {
  label: string;
  text: string;
  /** Added to every sentence's score (a previous summary's sentences already won once). */
  bonus?: number;
  /**
   * True when the text is the user's own words (a question, or the user's part of a summary): its
   * statements about the user, their constraints and preferences then outrank numerals, list
   * markers and code ({@link sentenceScore}).
   */
  user?: boolean;
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

/**
 * Splits a text into sentences: at `.`, `!`, `?` followed by space, at the CJK full stops `。`, `！`,
 * `？` (Chinese and Japanese put no space after them, so they end a sentence wherever they stand), at
 * an ASCII `!` or `?` followed by a CJK character (a Chinese writer typing half-width marks puts no
 * space after them either: `几个步骤?顺便说一下…`), and at line breaks.
 */
export function splitSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|(?<=[。！？])\s*|(?<=[!?])(?=[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}])|\n+/u)
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => s.length > 0)
    .slice(0, MAX_SENTENCES);
}

/**
 * A first-person statement (case-sensitive, so a lone `i` or `US` is not one): English `I` / `I'm` / `my` / `we` / `our`…, Chinese 我 / 我们, Japanese
 * 私 / 僕, Korean 저는 / 나는 / 제가 / 내가 / 우리…. What a user says about themselves, their
 * constraints and their preferences.
 */
const FIRST_PERSON =
  /(^|[^\p{L}])(I|I'm|I’m|I've|I’ve|I'd|I’d|I'll|I’ll|[Mm]e|[Mm]y|[Mm]ine|[Mm]yself|[Ww]e|[Ww]e're|[Ww]e’re|[Oo]ur|[Oo]urs|us)(?=$|[^\p{L}\p{N}])|我|私は|私の|僕|저는|저의|제가|나는|내가|나의|우리/u;

/** Added to a user's first-person statement, after the length division: more than any numeral row or list line scores. */
export const SELF_STATEMENT_BONUS = 6;

/**
 * Added on top of {@link SELF_STATEMENT_BONUS} to a user's *fact* ({@link isUserFact}): a short
 * statement about themselves or a note they ask to be kept, not a question or a request. Larger than
 * any other sentence's whole score, so a summary keeps every fact it can fit before anything else.
 */
export const USER_FACT_BONUS = 20;

/** A user's fact is at most this many words (a CJK character counts half a word): longer is a task description. */
export const USER_FACT_MAX_WORDS = 28;

/** Asks the user wants kept: "note", "remember", "keep in mind", "for the record"; 记下 / 记住 / 请注意 / 别忘了. */
const MEMO =
  /\b(?:note|remember|keep in mind|don['’]t forget|for the record|FYI)\b|记下|记住|请注意|注意一下|别忘|備忘|メモ|覚えて|기억해|메모/iu;

/** A request to the assistant, not a statement: "I want you to", "can you", "tell me", 请你 / 帮我 / 你能. */
const REQUEST =
  /\b(?:I(?:['’]d| would)? (?:like|want|need) (?:you|to know|to learn|help)|can you|could you|would you|will you|tell me|show me|help me|give me|walk me|teach me|explain|write|let me know)\b|请你|请帮|帮我|你能|你可以|能否|能不能|告诉我|给我/iu;

/** The user as the subject or owner (`I`, `my`, `we`, `our`, 我, 私, 저는…): {@link FIRST_PERSON} without the object forms `me` and `us`. */
const SPEAKER =
  /(^|[^\p{L}])(I|I'm|I’m|I've|I’ve|I'd|I’d|I'll|I’ll|[Mm]y|[Mm]ine|[Ww]e|[Ww]e're|[Ww]e’re|[Oo]ur|[Oo]urs)(?=$|[^\p{L}\p{N}])|我|私は|私の|僕|저는|저의|제가|나는|내가|나의|우리/u;

/** CJK ideographs and kana: written without spaces between words. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;

/**
 * The words of a sentence: its space-separated tokens, with each run of CJK characters cut into pieces
 * of two characters (a rough word for text written without spaces) apart from the Latin or digits
 * beside it (`预算是41,300元` → `预算`, `是`, `41,300`, `元`).
 */
export function sentenceWords(sentence: string): string[] {
  return sentence
    .split(/\s+/)
    .filter(Boolean)
    .flatMap((token) =>
      CJK.test(token)
        ? (token.match(
            /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]{1,2}|[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]+/gu,
          ) ?? [])
        : [token],
    );
}

/**
 * True when a sentence of the user's own words is a fact to keep (facts the user stated must survive
 * the summary): a first-person
 * statement (`my manager is…`, `we decided…`, `我的预算是…`) or a note the user asks to be kept
 * (`please note the ticket…`, `请记下…`), at most {@link USER_FACT_MAX_WORDS} words, and neither a
 * question (`?`, `？`, a final `吗`) nor a request to the assistant (`I want you to…`, `can you…`,
 * `请你…`) unless it is a note.
 */
export function isUserFact(sentence: string): boolean {
  if (sentenceWords(sentence).length > USER_FACT_MAX_WORDS) return false;
  if (MEMO.test(sentence)) return true;
  if (!SPEAKER.test(sentence)) return false;
  return !/[?？]|[吗呢][。！]?$/u.test(sentence) && !REQUEST.test(sentence);
}

/**
 * Splits a sentence into clauses: after a CJK comma, semicolon or colon (`，`, `；`, `：`, `、` not:
 * it lists words) and after a Latin `,` `;` `:` followed by a space. Each clause keeps its mark.
 */
export function splitClauses(sentence: string): string[] {
  return sentence
    .split(/(?<=[，；：])\s*|(?<=[,;:])\s+/u)
    .map((c) => c.trim())
    .filter(Boolean);
}

/**
 * The units a sentence of the user's own words is ranked in: the sentence itself when it is a fact
 * ({@link isUserFact}) or holds none; otherwise its clauses, each fact clause a unit of its own and the
 * runs of other clauses between them one unit each, in order. Users run a fact into a longer
 * sentence (no full stop before it, as Chinese chat often has: `…所以我想学习顺便说一下，我的经理是张伟。`,
 * `…然后再综合起来生成Prompt我们决定在杭州部署。`), and the whole is then a long request that is no fact
 * while its last clause is one (the facts bench/memory's Chinese sessions 8–15 lost).
 */
export function userUnits(sentence: string): string[] {
  if (isUserFact(sentence)) return [sentence];
  const clauses = splitClauses(sentence);
  if (clauses.length < 2 || !clauses.some(isUserFact)) return [sentence];
  const units: string[] = [];
  let run: string[] = [];
  for (const clause of clauses) {
    if (!isUserFact(clause)) {
      run.push(clause);
      continue;
    }
    if (run.length) units.push(joinClauses(run));
    run = [];
    units.push(clause);
  }
  if (run.length) units.push(joinClauses(run));
  return units;
}

/** Sentences and clauses joined back as they were written: no space after a CJK comma, semicolon or colon (a clause went on), one otherwise. */
export function joinClauses(clauses: string[]): string {
  return clauses.reduce((text, c) => (text === '' ? c : /[，；：]$/u.test(text) ? `${text}${c}` : `${text} ${c}`), '');
}

/**
 * The user's facts in a text of their own words ({@link userUnits} that are {@link isUserFact}), in order:
 * what a summary of that text must keep first.
 */
export function userFacts(text: string): string[] {
  return splitSentences(text).flatMap(userUnits).filter(isUserFact);
}

/** A list marker opening a line (`1.`, `2)`, `-`, `*`, `•`, `a.`): structure, not content. */
const LIST_MARKER = /^(?:\d{1,3}[.)]|[-*•·]|[a-z][.)])$/iu;

/** A sentence that reads as code: braces, semicolons, `=>`, `==`, a call `f(…)`, backticks, or a shell prompt. */
const CODE_LINE = /[{};`]|=>|==|\w\(|^\s*(?:\$|>>>|#include|import |def |SELECT |CREATE )/iu;

/** A markdown heading line: `#…`, or a lone bold or underlined span. */
const HEADING = /^(?:#{1,6}\s.*|\*\*[^*]+\*\*:?|__[^_]+__:?)$/u;

/**
 * How informative a sentence is, for keeping what the user said, names, numbers, decisions and open
 * questions: each number 3 (the first two; 1 each after that, so a row of figures does not win by
 * its figures), each capitalised word not opening the sentence 2, each distinct content word 1
 * (single letters other than digits, and list markers like `1.` or `-`, count for nothing), a question
 * mark 2, a decision or preference word (decided, chose, will, must, prefer…) 2; divided by the square
 * root of the word count so that a long sentence does not win by length alone; halved for a line of
 * code, quartered for a markdown heading. Words are {@link sentenceWords} (CJK in two-character pieces).
 * With `user` (the user's own words), a first-person statement (`I'm…`, `my…`, `我…`, `저는…`)
 * then gets {@link SELF_STATEMENT_BONUS}, so the user's statements about themselves, their
 * constraints and preferences outrank numerals, list markers and code lines; a short one that is a
 * fact ({@link isUserFact}) gets {@link USER_FACT_BONUS} more, above every other sentence.
 */
export function sentenceScore(sentence: string, user = false): number {
  const words = sentenceWords(sentence);
  if (words.length === 0) return 0;
  let score = 0;
  let numbers = 0;
  const seen = new Set<string>();
  words.forEach((raw, i) => {
    if (LIST_MARKER.test(raw)) return;
    const word = raw.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    // A lone letter (A, B, x) names nothing and carries no content (a lone CJK character does).
    if (!word || (word.length === 1 && !/[\p{N}\p{Script=Han}]/u.test(word))) return;
    if (/\p{N}/u.test(word)) score += (numbers += 1) <= 2 ? 3 : 1;
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
  if (/[?？]/u.test(sentence)) score += 2;
  score /= Math.sqrt(words.length);
  if (CODE_LINE.test(sentence)) score /= 2;
  // A heading (`## Setup`, `**Performance**`) names a section; the sentences under it carry the content.
  if (HEADING.test(sentence)) score /= 4;
  if (!user) return score;
  if (isUserFact(sentence)) return score + SELF_STATEMENT_BONUS + USER_FACT_BONUS;
  return FIRST_PERSON.test(sentence) ? score + SELF_STATEMENT_BONUS : score;
}

/**
 * A deterministic extractive summary (the summariser of the local stand-in and of `extractive`):
 * first the user's facts ({@link isUserFact} in a `user` source), oldest source first (by score within
 * one source), so that a session summary carries forward what the summaries it replaces held
 * and newer chatter never squeezes out an older fact; then the most informative other sentences
 * ({@link sentenceScore}, with the user's statements first for a `user` source, + each source's bonus) that
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
      // The user's sentences in their fact units: a fact run into a longer sentence is ranked as a fact.
      .flatMap((text) => (source.user ? userUnits(text) : [text]))
      .map((text, i) => ({
        source: s,
        order: i,
        text,
        score: sentenceScore(text, source.user ?? false) + (source.bonus ?? 0),
        fact: (source.user ?? false) && isUserFact(text),
      }))
      .filter((x) => !seen.has(x.text) && seen.add(x.text)),
  );
  if (sentences.length === 0) return '';
  // The user's facts first, oldest source first (a newer fact never squeezes out an older one: in a rolling
  // session summary the previous summary is the first source); then every other sentence by score.
  const ranked = [...sentences].sort(
    (a, b) =>
      Number(b.fact) - Number(a.fact) ||
      (a.fact ? a.source - b.source : 0) ||
      b.score - a.score ||
      a.source - b.source ||
      a.order - b.order,
  );
  const kept = new Set<(typeof sentences)[number]>();
  const render = (set: Set<(typeof sentences)[number]>) =>
    sources
      .map((source, s) => {
        const mine = sentences.filter((x) => x.source === s && set.has(x));
        return mine.length ? `${source.label ? `${source.label}: ` : ''}${joinClauses(mine.map((x) => x.text))}` : '';
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
