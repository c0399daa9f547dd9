import type { ChatMessage, TokenCounter } from '@ask/token-counting';
import type { ChatChunk, ChatProvider, ChatRequest, EmbeddingProvider } from '../types';

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

/** One retrieved item as found in the prompt's context block. */
interface ContextPassage {
  index: number;
  title: string;
  score: number;
  text: string;
}

/** A quotable sentence of a passage, with the code block it introduces when one follows it. */
interface Candidate {
  sentence: string;
  code?: { lang: string; lines: string[] };
  passage: ContextPassage;
  order: number;
}

/**
 * Added score of a sentence holding two adjacent keywords of the question in the same order, as a
 * share of the pair's mean keyword weight. Chosen with {@link TITLE_WEIGHT} on the PostgreSQL
 * manual's 151 answerable questions of bench/retrieval/questions.jsonl, by how often the answer cites
 * an answering page: a fit set only, with no held-out figure yet.
 */
export const PHRASE_BONUS = 1;

/** How much a passage whose title holds all of the question's keywords raises its sentences' scores (× 1 + this). */
export const TITLE_WEIGHT = 2;

const STOPWORDS = new Set(
  'a an and are as at be by can do does for from how i in is it of on or that the this to what when where which who why with you your me my we our use using get set'.split(
    ' ',
  ),
);

/** Lines of a code block quoted under its sentence. */
const MAX_CODE_LINES = 12;

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
 * (log(1 + N / (1 + df))), a keyword found only in the sentence's code counting half, plus
 * {@link PHRASE_BONUS} × the mean weight of each pair of the question's adjacent keywords the sentence
 * holds in the same order ("partial index", "VACUUM FULL"); a passage whose title holds the
 * question's keywords is about them, so its sentences' scores are multiplied by 1 + {@link TITLE_WEIGHT}
 * × the weighted share of the question's keywords in that title. Prose that is mostly links, badges
 * or markup is never quoted. When `relevance` says nothing relevant was found
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

  const terms = [...keywords(question)];
  const candidates: Candidate[] = [];
  for (const passage of passages)
    for (const c of quotable(passage)) candidates.push({ ...c, order: candidates.length });
  const vocab = candidates.map((c) => {
    const prose = keywordList(c.sentence);
    return {
      prose: new Set(prose),
      pairs: adjacentPairs(prose),
      code: c.code ? keywords(c.code.lines.join(' ')) : new Set<string>(),
    };
  });
  const weight = new Map(
    terms.map((t) => {
      const df = vocab.filter((v) => v.prose.has(t) || v.code.has(t)).length;
      return [t, Math.log(1 + candidates.length / (1 + df))] as const;
    }),
  );
  const ordered = keywordList(question);
  const questionPairs = ordered.slice(1).map((b, j) => [ordered[j], b] as const);
  const totalWeight = terms.reduce((sum, t) => sum + (weight.get(t) ?? 0), 0);
  const titleShare = new Map(
    passages.map((p) => {
      const title = keywords(p.title);
      const held = terms.reduce((sum, t) => sum + (title.has(t) ? (weight.get(t) ?? 0) : 0), 0);
      return [p.index, totalWeight > 0 ? held / totalWeight : 0] as const;
    }),
  );
  const scored = candidates.map((c, i) => {
    if (similarity) {
      const cosine = similarity.get(c.sentence) ?? 0;
      return { ...c, score: cosine > 0 ? cosine - c.passage.index * 1e-6 : 0 };
    }
    let score = 0;
    for (const t of terms) {
      const w = weight.get(t) ?? 0;
      score += vocab[i].prose.has(t) ? w : vocab[i].code.has(t) ? w / 2 : 0;
    }
    if (score > 0) {
      for (const [a, b] of questionPairs)
        if (vocab[i].pairs.has(`${a} ${b}`))
          score += (PHRASE_BONUS * ((weight.get(a) ?? 0) + (weight.get(b) ?? 0))) / 2;
      score *= 1 + TITLE_WEIGHT * (titleShare.get(c.passage.index) ?? 0);
    }
    // Earlier (better-ranked) passages win ties.
    return { ...c, score: score > 0 ? score - c.passage.index * 1e-3 : 0 };
  });
  scored.sort((a, b) => b.score - a.score || a.order - b.order);
  const seen = new Set<string>();
  const chosen = scored
    .filter((s) => s.score > 0 && !seen.has(s.sentence) && seen.add(s.sentence))
    .slice(0, maxPassages);
  if (chosen.length === 0) {
    if (passages.length === 0) {
      lines.push("The retrieved context is empty, so I cannot answer from this project's knowledge.");
      return lines.join('\n');
    }
    return notCovered(
      similarity ? 'no retrieved sentence is close to it in meaning' : 'no retrieved passage shares a keyword with it',
    );
  }
  lines.push('From the retrieved context:');
  for (const c of chosen.sort((a, b) => a.order - b.order)) {
    lines.push(`- ${truncate(c.sentence, 400)} [${c.passage.index}: ${c.passage.title}]`);
    if (c.code) lines.push(`  \`\`\`${c.code.lang}`, ...c.code.lines.map((l) => `  ${l}`), '  ```');
  }
  const cited = [...new Map(chosen.map((c) => [c.passage.index, c.passage])).values()];
  lines.push(`Sources: ${cited.map((p) => `[${p.index}] ${p.title}`).join('; ')}`);
  return lines.join('\n');
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

/** The text's keywords in order (stemmed, without stopwords and one-letter words), repeats kept. */
function keywordList(text: string): string[] {
  return text
    .toLowerCase()
    .normalize('NFKC')
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((w) => w.length > 1 && !STOPWORDS.has(w))
    .map(stem);
}

function keywords(text: string): Set<string> {
  return new Set(keywordList(text));
}

/** Each pair of adjacent keywords of a {@link keywordList} (stopwords already skipped), as `"a b"`. */
function adjacentPairs(list: readonly string[]): Set<string> {
  return new Set(list.slice(1).map((b, j) => `${list[j]} ${b}`));
}

/** A crude English stem, so `jobs` matches `job` and `migrations` matches `migration`. */
function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/**
 * The passage's quotable sentences: prose split into sentences (one line each, without list markers
 * or heading hashes), each sentence that ends right before a fenced code block carrying that block.
 * A fence cut by the chunk boundary (an unmatched ```) is treated as code up to the passage's edge.
 */
function quotable(passage: ContextPassage): Array<Omit<Candidate, 'order'>> {
  const out: Array<Omit<Candidate, 'order'>> = [];
  const parts = passage.text.split(/^[ \t]*```/m);
  // Even parts are prose and odd parts code, unless the chunk starts inside a fence: an odd number of
  // fence lines whose first is bare (a closing fence; an opening one usually names its language).
  const fences = passage.text.match(/^[ \t]*```.*$/gm) ?? [];
  const startsInCode = fences.length % 2 === 1 && /^[ \t]*```[ \t]*$/.test(fences[0] ?? '');
  for (let i = 0; i < parts.length; i++) {
    const isCode = (i % 2 === 1) !== startsInCode;
    if (isCode) continue;
    const sentences = proseSentences(parts[i]);
    for (const [j, sentence] of sentences.entries()) {
      const next = parts[i + 1];
      // A sentence ending in a colon, or a short caption ("Register the types for a client"), right
      // before a code block introduces it.
      const introducesCode =
        j === sentences.length - 1 && next !== undefined && (/[:：]$/.test(sentence) || sentence.length <= 80);
      out.push({ sentence, passage, ...(introducesCode ? { code: codeBlock(next) } : {}) });
    }
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

/** Sentences of a prose part that read as prose: markup removed, at least four words, mostly letters. */
function proseSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?。！？])\s+|\n{2,}|\n(?=[ \t]*(?:[-*+]|#{1,6}|\d+\.)[ \t])/u)
    .filter((s) => (s.match(/\]\(/g) ?? []).length < 3 && !/^\s*\|/.test(s))
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

function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
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
