import type { ChatMessage, TokenCounter } from '@ask/token-counting';
import type { ChatChunk, ChatProvider, ChatRequest, EmbeddingProvider } from '../types';
import {
  adjacentPairs,
  HOW_TO,
  keywordList,
  keywords,
  questionCompounds,
  questionParts,
  stem,
  type Compound,
} from './local-chat.keywords';
import { continueTables, quotable, truncate, type Candidate, type ContextPassage } from './local-chat.sentences';

export { letterShare, isHeading } from './local-chat.sentences';
export { questionParts, stem } from './local-chat.keywords';

/** Options of the local stand-in. */
export interface LocalChatOptions {
  /** Counts prompt and completion tokens for the usage it reports (the catalog's counter for `local`). */
  counter: TokenCounter;
  /** Pause between streamed chunks, in milliseconds, so streaming is visible (0 in benchmarks). */
  chunkDelayMs?: number;
  /** Words per streamed chunk. */
  wordsPerChunk?: number;
  /** Most passages quoted in one answer. */
  maxPassages?: number;
  /**
   * The retrieval's relevance judgement (ask-contracts `relevanceJudgement`: the embedder's calibrated
   * rule on the fused ranking's evidence, the one `ask eval` and the planner's floor use): when it
   * says nothing relevant was found, the stand-in answers that the knowledge base does not seem to
   * cover the question and lists the nearest sources instead of quoting them. Unset: never abstains.
   */
  relevance?: StandInRelevance;
  /**
   * The project's semantic embedder (`local-semantic`), when it has one: sentences are then picked by
   * cosine similarity to the question instead of shared keywords, so a paraphrased question still
   * finds its answer. At most {@link MAX_SEMANTIC_SENTENCES} sentences are embedded per answer.
   */
  sentenceEmbedder?: Pick<EmbeddingProvider, 'embed'>;
}

/** What the stand-in is told of the retrieval's relevance (ask-contracts `RelevanceJudgement`). */
export interface StandInRelevance {
  /** The best item's evidence, null when nothing was retrieved. */
  evidence: number | null;
  /** The rule's threshold. */
  below: number;
  /** No item reaches `below` (or nothing was retrieved). */
  nothingRelevant: boolean;
}

/** Most candidate sentences embedded for one answer (in passage order): bounds the work per ask (~15 ms each on one core). */
export const MAX_SEMANTIC_SENTENCES = 96;

/**
 * Added score of a sentence holding two adjacent keywords of the question in the same order, as a
 * share of the pair's mean keyword weight. Chosen with {@link TITLE_WEIGHT} on the PostgreSQL
 * manual's 151 answerable questions of bench/retrieval/questions.jsonl, by how often the answer cites
 * an answering page: a fit set only, with no held-out figure yet.
 */
export const PHRASE_BONUS = 1;

/** How much a passage whose title holds all of the question's keywords raises its sentences' scores (× 1 + this). */
export const TITLE_WEIGHT = 2;

/**
 * Added score of a sentence that defines the question's subject ("A partial index is …": its words
 * before a defining verb are mostly the question's keywords, the first of them one), as a share of
 * those keywords' weights. Judged by hand on the demo's PostgreSQL session (bench/answers), not fitted.
 */
export const DEFINITION_BONUS = 1;

/**
 * Words past which a sentence's score is divided by √(words / this): a long sentence holds more of the
 * question's keywords by chance. Judged by hand on the demo's PostgreSQL session, not fitted.
 */
export const LONG_SENTENCE_WORDS = 30;

/**
 * Score factor of the other sentences of the best sentence's passage, so the answer reads that
 * section's on-topic sentences together. Judged by hand (bench/answers), not fitted.
 */
export const LEAD_PASSAGE_WEIGHT = 1.3;

/**
 * Share of the best sentence's score a sentence needs to be quoted with it, so an answer is its
 * on-topic sentences and not a wall of loosely related ones. Judged by hand (bench/answers), not fitted.
 */
export const RELATIVE_FLOOR = 0.35;

let standInCpuMicros = 0;

function addStandInCpu(since: NodeJS.CpuUsage): void {
  const used = process.cpuUsage(since);
  standInCpuMicros += used.user + used.system;
}

/**
 * CPU time this process spent in the local stand-in LLM's own work since it started, in
 * microseconds (user + system, `process.cpuUsage` around its synchronous parts): choosing the
 * answer's sentences and counting the request and the answer for its usage report. A real provider
 * does this work elsewhere, so benchmarks report it apart from the pipeline's cost.
 */
export function localChatCpuMicros(): number {
  return standInCpuMicros;
}

/**
 * The embedded `local` LLM: a stand-in WITHOUT a model. It answers from the retrieved context alone,
 * quoting the sentences that share the most (rarest) words with the question, each with its source
 * title and, when the sentence introduces a code block (`Add jobs to the queue:` then the code), that
 * code; and it streams the answer in several deltas. It reads the context items that libs/context-budget
 * renders (`renderContextItem`) from the last user message. When the retrieval's `relevance` judgement
 * says nothing relevant was found, it says that the knowledge base does not seem to cover the question.
 *
 * Usage is reported as `counter` counts the request and the answer (tokens).
 */
export class LocalChatProvider implements ChatProvider {
  readonly provider = 'local' as const;

  constructor(private readonly options: LocalChatOptions) {}

  async *streamChat(request: ChatRequest): AsyncIterable<ChatChunk> {
    const similarity = this.options.sentenceEmbedder
      ? await semanticSimilarity(request, this.options.sentenceEmbedder, this.options.relevance)
      : undefined;
    let started = process.cpuUsage();
    const answer = composeAnswer(request.messages, this.options.maxPassages ?? 4, this.options.relevance, similarity);
    addStandInCpu(started);
    const words = answer.split(/(?<=\s)/);
    const per = this.options.wordsPerChunk ?? 4;
    const delay = this.options.chunkDelayMs ?? 0;
    for (let i = 0; i < words.length; i += per) {
      if (request.signal?.aborted) throw abortError(request.signal);
      if (delay > 0 && i > 0) await sleep(delay, request.signal);
      yield { type: 'delta', text: words.slice(i, i + per).join('') };
    }
    started = process.cpuUsage();
    const promptTokens = this.options.counter.countMessages(request.messages);
    const completionTokens = this.options.counter.countText(answer);
    addStandInCpu(started);
    yield {
      type: 'usage',
      promptTokens,
      completionTokens,
      raw: { promptTokens, completionTokens },
      convention: 'local',
      model: request.model,
      finishReason: 'stop',
    };
  }
}

/**
 * The answer's first line on a follow-up: how many earlier turns the prompt carried, from the user
 * messages before the question. Conversation memory rides as one fenced user message
 * (`<conversation_memory>`, libs/context-budget plan-memory) holding `Turn n (summary):` parts and at
 * most one `Summary of turns 1–n:`; those turns are counted from its part headers, not as one turn.
 * Null on a first turn.
 */
export function followUpLine(earlierUserMessages: readonly string[]): string | null {
  const memory = earlierUserMessages.find((m) => m.includes('<conversation_memory>'));
  const verbatim = earlierUserMessages.length - (memory ? 1 : 0);
  const plural = (n: number) => `${n} earlier turn${n === 1 ? '' : 's'}`;
  if (!memory) return verbatim > 0 ? `(Follow-up; this prompt carried ${plural(verbatim)}.)` : null;
  const summaries = memory.match(/^Turn \d+ \(summary\):$/gm)?.length ?? 0;
  const session = /^Summary of turns 1–(\d+):$/m.exec(memory);
  const parts = [`${plural(verbatim)} verbatim`];
  if (summaries > 0) parts.push(summaries === 1 ? '1 as a summary' : `${summaries} as summaries`);
  if (session) parts.push(`turns 1–${session[1]} in a session summary`);
  return `(Follow-up; this prompt carried ${parts.join(', ')}.)`;
}

/**
 * Builds the stand-in's answer text from the request (deterministic). Sentences are scored by the
 * question's keywords they contain, each weighted by its rarity among the retrieved sentences
 * (log(1 + N / (1 + df))), a word that only frames the question × {@link FRAMING_WEIGHT}, a keyword
 * found only in what rides with the sentence (its code, list or table rows, the sentence explaining
 * it) counting half, plus {@link PHRASE_BONUS} × the mean weight of each pair of the question's
 * adjacent keywords the sentence holds in the same order ("partial index", "VACUUM FULL"), plus
 * {@link DEFINITION_BONUS} × its subject's weight when it defines the question's subject ("A partial
 * index is …"); a passage whose title holds the question's keywords is about them, so its sentences'
 * scores are multiplied by 1 + {@link TITLE_WEIGHT} × the weighted share of the question's keywords in
 * that title; a word joining two adjacent question words (`pg_basebackup`) holds both; a question (or
 * part) asking "why" also has the keyword "reason"; a how-to part ({@link HOW_TO}) scores a sentence
 * introducing code × (1 + {@link HOW_TO_CODE_BONUS}); a table cut by a chunk boundary is completed
 * from the page's next retrieved chunk ({@link continueTables}). A long
 * sentence (over {@link LONG_SENTENCE_WORDS} words) and one opening on a connective score less; the best sentence's
 * passage's other sentences × {@link LEAD_PASSAGE_WEIGHT}. At most `maxPassages` sentences are quoted,
 * each at least {@link RELATIVE_FLOOR} of the best's score, each part of a two-part question
 * ({@link questionParts}) with its best one; passages in the order of their best sentence, each one's
 * sentences in document order. Prose that is mostly links, badges or markup, headings, front matter
 * and table rows (except under the sentence naming the table) is never quoted. When `relevance` says nothing relevant was found
 * (or nothing was retrieved), the answer says the knowledge base does not seem to
 * cover the question and lists the nearest sources with their scores. With `similarity` (sentence →
 * cosine similarity to the question, from a semantic embedder) sentences are ranked by it instead,
 * and a sentence needs no shared keyword to be quoted (one of cosine ≤ 0 is never quoted).
 */
export function composeAnswer(
  messages: readonly ChatMessage[],
  maxPassages: number,
  relevance?: StandInRelevance,
  similarity?: ReadonlyMap<string, number>,
): string {
  const last = [...messages].reverse().find((m) => m.role === 'user');
  if (!last) return 'I have no question to answer.';
  const { passages, question } = parseUserMessage(last.content);
  const earlier = messages.filter((m) => m.role === 'user' && m !== last).map((m) => m.content);
  const lines: string[] = [];
  const follow = followUpLine(earlier);
  if (follow) lines.push(follow);
  const notCovered = (why: string) => {
    lines.push(`The knowledge base does not seem to cover this question: ${why}.`);
    if (passages.length)
      lines.push(
        `Nearest sources: ${nearest(passages)
          .map((p) => `[${p.index}] ${p.title} (${p.score.toFixed(2)})`)
          .join('; ')}`,
      );
    return lines.join('\n');
  };
  if (relevance) {
    if (passages.length === 0 || relevance.evidence === null) return notCovered('nothing was retrieved');
    if (relevance.nothingRelevant)
      return notCovered(
        `the best match holds ${relevance.evidence.toFixed(2)} of the question's weighted terms, below ${relevance.below}`,
      );
  }

  // "Why …?" asks for a reason: the word the answer's sentence says it with ("for several reasons").
  const why = (text: string) => (/\bwhy\b/i.test(text) ? `${text} reason` : text);
  const terms = [...keywords(why(question))];
  const candidates: Candidate[] = [];
  for (const passage of continueTables(passages))
    for (const c of quotable(passage)) candidates.push({ ...c, order: candidates.length });
  const compounds = questionCompounds(question);
  const vocab = candidates.map((c) => {
    const prose = keywordList(c.sentence, compounds);
    return {
      prose: new Set(prose),
      pairs: adjacentPairs(prose),
      subject: definitionSubject(c.sentence, compounds),
      words: c.sentence.split(' ').length,
      // What rides with the sentence (its code, its list, the sentence explaining it) counts half.
      extra: keywords([...(c.code?.lines ?? []), ...(c.list ?? []), c.explained ?? ''].join(' ')),
    };
  });
  const weight = new Map(
    terms.map((t) => {
      const df = vocab.filter((v) => v.prose.has(t) || v.extra.has(t)).length;
      return [t, Math.log(1 + candidates.length / (1 + df))] as const;
    }),
  );
  const totalWeight = terms.reduce((sum, t) => sum + (weight.get(t) ?? 0), 0);
  const titleShare = new Map(
    passages.map((p) => {
      const title = new Set(keywordList(p.title, compounds));
      const held = terms.reduce((sum, t) => sum + (title.has(t) ? (weight.get(t) ?? 0) : 0), 0);
      return [p.index, totalWeight > 0 ? held / totalWeight : 0] as const;
    }),
  );
  // A word that frames the question ("difference", "work", "happen") says little of what it is about.
  const w = (t: string) => (weight.get(t) ?? 0) * (FRAMING.has(t) ? FRAMING_WEIGHT : 1);
  /** Keyword score of candidate `i` for a question (or one part of it) with these keywords in order. */
  const keywordScore = (i: number, ordered: readonly string[], howTo = false): number => {
    const v = vocab[i];
    let score = 0;
    for (const t of new Set(ordered)) score += v.prose.has(t) ? w(t) : v.extra.has(t) ? w(t) / 2 : 0;
    if (score <= 0) return 0;
    for (let j = 1; j < ordered.length; j++)
      if (v.pairs.has(`${ordered[j - 1]} ${ordered[j]}`))
        score += (PHRASE_BONUS * (w(ordered[j - 1]) + w(ordered[j]))) / 2;
    // A sentence that says what the question's subject is ("A partial index is …") answers it first.
    const asked = new Set(ordered);
    const held = v.subject.filter((t) => asked.has(t));
    if (
      held.length &&
      (asked.has(v.subject[0]) || (v.subject.length === 2 && asked.has(v.subject[1]))) &&
      held.length >= v.subject.length - 1
    )
      score += DEFINITION_BONUS * held.reduce((sum, t) => sum + w(t), 0);
    score *= 1 + TITLE_WEIGHT * (titleShare.get(candidates[i].passage.index) ?? 0);
    // A long sentence holds more keywords by chance; one that opens on a connective ("As a result, …",
    // "This …") leans on the sentence before it and reads worse alone.
    score /= Math.sqrt(Math.max(1, v.words / LONG_SENTENCE_WORDS));
    if (CONNECTIVE.test(candidates[i].sentence)) score *= CONNECTIVE_WEIGHT;
    // "How do I …?" asks for steps: a sentence that introduces the code to run shows them.
    if (howTo && candidates[i].code) score *= 1 + HOW_TO_CODE_BONUS;
    // Earlier (better-ranked) passages win ties.
    return score - candidates[i].passage.index * 1e-3;
  };
  const ordered = keywordList(why(question));
  const score = candidates.map((c, i) => {
    if (!similarity) return Math.max(0, keywordScore(i, ordered));
    const cosine = similarity.get(c.sentence) ?? 0;
    return cosine > 0 ? cosine - c.passage.index * 1e-6 : 0;
  });
  const byScore = (a: number, b: number) => score[b] - score[a] || a - b;
  const ranked = candidates
    .map((_, i) => i)
    .filter((i) => score[i] > 0)
    .sort(byScore);
  // The passage of the best sentence is most likely the section about the question: its other
  // on-topic sentences are read with it, so they weigh more than a stray sentence of another page.
  const lead = ranked.length ? candidates[ranked[0]].passage.index : -1;
  if (!similarity)
    for (const i of ranked.slice(1)) if (candidates[i].passage.index === lead) score[i] *= LEAD_PASSAGE_WEIGHT;
  ranked.sort(byScore);
  if (ranked.length === 0) {
    if (passages.length === 0) {
      lines.push("The retrieved context is empty, so I cannot answer from this project's knowledge.");
      return lines.join('\n');
    }
    return notCovered(
      similarity ? 'no retrieved sentence is close to it in meaning' : 'no retrieved passage shares a keyword with it',
    );
  }
  const floor = RELATIVE_FLOOR * score[ranked[0]];
  const picked = new Set<number>();
  const shown = new Set<string>();
  const pick = (i: number) => {
    const c = candidates[i];
    if (picked.has(i) || shown.has(c.sentence) || picked.size >= maxPassages) return;
    picked.add(i);
    shown.add(c.sentence);
  };
  // Each part of a question that asks two things gets its own best sentence, when it has one on point.
  const parts = similarity
    ? []
    : questionParts(question).map((part) => ({ words: keywordList(why(part)), howTo: HOW_TO.test(part) }));
  if (parts.length > 1)
    for (const part of parts) {
      const partScore = (i: number) =>
        keywordScore(i, part.words, part.howTo) * (candidates[i].passage.index === lead ? LEAD_PASSAGE_WEIGHT : 1);
      let best = -1;
      for (const i of ranked)
        if (!shown.has(candidates[i].sentence) && (best < 0 || partScore(i) > partScore(best))) best = i;
      if (best >= 0 && partScore(best) > 0 && score[best] >= floor) pick(best);
    }
  for (const i of ranked) if (score[i] >= floor) pick(i);

  // The answer leads with the passage of its best sentence, quoting each passage's picks in document
  // order; the passages follow by their best pick's score.
  const groups = new Map<number, number[]>();
  for (const i of [...picked].sort((a, b) => score[b] - score[a] || a - b)) {
    const key = candidates[i].passage.index;
    groups.set(key, [...(groups.get(key) ?? []), i]);
  }
  const chosen = [...groups.values()]
    .sort((a, b) => score[b[0]] - score[a[0]])
    .flatMap((g) => g.sort((a, b) => a - b))
    .map((i) => candidates[i]);
  lines.push('From the retrieved context:');
  for (const c of chosen) {
    const explained = c.explained && !shown.has(c.explained) ? ` ${truncate(c.explained, 300)}` : '';
    lines.push(`- ${truncate(c.sentence, 400)}${explained} [${c.passage.index}: ${c.passage.title}]`);
    for (const item of c.list ?? []) lines.push(`  - ${item}`);
    if (c.code) lines.push(`  \`\`\`${c.code.lang}`, ...c.code.lines.map((l) => `  ${l}`), '  ```');
  }
  const cited = [...new Map(chosen.map((c) => [c.passage.index, c.passage])).values()];
  lines.push(`Sources: ${cited.map((p) => `[${p.index}] ${p.title}`).join('; ')}`);
  return lines.join('\n');
}

/**
 * Words that frame a question rather than say what it is about ("What is the difference …", "How
 * does … work"): their weight is × {@link FRAMING_WEIGHT}. Stemmed as {@link stem} stems them.
 */
const FRAMING = new Set(
  'difference between way happen work good need mean explain example choose decide prefer possible best better purpose reason want know kind thing'
    .split(' ')
    .map((word) => stem(word)),
);

/**
 * Score factor (1 + this) of a sentence introducing a code block when a part of a two-part question
 * asks how to do something ({@link HOW_TO}), as that part's answer. Judged by hand on the demo's
 * PostgreSQL session (bench/answers: "How do I create an index on a table, and which index types …"),
 * not fitted; applied to the whole question it moved the fallback session's answers both ways.
 */
export const HOW_TO_CODE_BONUS = 0.5;

/** Weight of a framing word relative to a topic word. Judged by hand (bench/answers), not fitted. */
export const FRAMING_WEIGHT = 0.5;

/** A sentence opening on a connective or a pronoun that points at the sentence before it. */
const CONNECTIVE =
  /^(?:As a result|But|And|So|Yet|Still|Thus|Therefore|Hence|However|Also|Finally|Furthermore|Moreover|In addition|Otherwise|Instead|Similarly|Likewise|This|These|Those|Such)\b/;

/** Score factor of a sentence opening on a {@link CONNECTIVE}. Judged by hand (bench/answers), not fitted. */
export const CONNECTIVE_WEIGHT = 0.75;

/** Words a definition's subject is followed by: "X is …", "X allows …", "X provides …". */
const DEFINING_VERB =
  /^(.{2,80}?)\s+(?:is|are|allows|allow|provides|provide|means|refers to|enables|enable|contains|describes)\s/i;

/**
 * The keywords of a sentence's subject when it reads as a definition ("A partial index is an index
 * built over …" → `partial index`): the words before its first defining verb within 80 characters,
 * when they are at most four keywords and hold no comma. Empty otherwise. It counts as a definition
 * of the question's subject when all of its keywords but one are the question's, its first among
 * them, or the second of two (the head noun: "Redis pipelining").
 */
function definitionSubject(sentence: string, compounds: readonly Compound[]): string[] {
  const m = DEFINING_VERB.exec(sentence);
  if (
    !m ||
    m[1].includes(',') ||
    /^(?:there|it|this|these|that|those|they|here|when|if|although|since|because|while|once|after|before|unless|whether|as)\b/i.test(
      m[1],
    )
  )
    return [];
  const subject = keywordList(m[1], compounds, true);
  return subject.length <= 4 ? subject : [];
}

/**
 * Cosine similarity of each candidate sentence of the request's context to its question, with the
 * semantic embedder (unit vectors, so the dot product): the first {@link MAX_SEMANTIC_SENTENCES}
 * distinct sentences in passage order, question included in the same batch. Empty when there is no
 * context.
 */
async function semanticSimilarity(
  request: ChatRequest,
  embedder: Pick<EmbeddingProvider, 'embed'>,
  relevance: StandInRelevance | undefined,
): Promise<Map<string, number>> {
  const last = [...request.messages].reverse().find((m) => m.role === 'user');
  const out = new Map<string, number>();
  if (!last) return out;
  const { passages, question } = parseUserMessage(last.content);
  // The answer will abstain on the retrieval's judgement alone: nothing to embed.
  if (relevance?.nothingRelevant) return out;
  const sentences = [...new Set(passages.flatMap((p) => quotable(p).map((c) => c.sentence)))].slice(
    0,
    MAX_SEMANTIC_SENTENCES,
  );
  if (sentences.length === 0) return out;
  const [q, ...vectors] = await embedder.embed([question, ...sentences], request.signal);
  vectors.forEach((v, i) =>
    out.set(
      sentences[i],
      v.reduce((sum, x, j) => sum + x * q[j], 0),
    ),
  );
  return out;
}

/** The three best-scored passages, one per title. */
function nearest(passages: readonly ContextPassage[]): ContextPassage[] {
  const byTitle = new Map<string, ContextPassage>();
  for (const p of [...passages].sort((a, b) => b.score - a.score || a.index - b.index))
    if (!byTitle.has(p.title)) byTitle.set(p.title, p);
  return [...byTitle.values()].slice(0, 3);
}

/**
 * Splits the final user message into its context passages and the question. The message is the
 * rendered items of libs/context-budget (`[n] kind · title · score 0.83`, the text, a blank line),
 * then the question: so the question is what follows the last blank line after the last header.
 */
export function parseUserMessage(content: string): { passages: ContextPassage[]; question: string } {
  const header = /^\[(\d+)\] (?:insight|recommendation|knowledge) · (.*?) · score (-?[\d.]+)$/gm;
  const heads: Array<{ index: number; title: string; score: number; start: number; end: number }> = [];
  let m: RegExpExecArray | null;
  while ((m = header.exec(content)) !== null) {
    heads.push({
      index: Number(m[1]),
      title: m[2].trim(),
      score: Number(m[3]),
      start: m.index,
      end: m.index + m[0].length,
    });
  }
  if (heads.length === 0) return { passages: [], question: content.trim() };
  const lastBreak = content.lastIndexOf('\n\n');
  const questionStart = lastBreak > heads[heads.length - 1].end ? lastBreak + 2 : content.length;
  const passages = heads.map((h, i) => ({
    index: h.index,
    title: h.title,
    score: h.score,
    text: content.slice(h.end, i + 1 < heads.length ? heads[i + 1].start : questionStart).trim(),
  }));
  return { passages, question: content.slice(questionStart).trim() };
}

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason;
  if (reason instanceof Error) return reason;
  const err = new Error('The operation was aborted');
  err.name = 'AbortError';
  return err;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
