import type { ChatMessage, TokenCounter } from '@ask/token-counting';
import type { ChatChunk, ChatProvider, ChatRequest } from '../types';

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
}

/** One retrieved item as found in the prompt's context block. */
interface ContextPassage {
  index: number;
  title: string;
  text: string;
}

const STOPWORDS = new Set(
  'a an and are as at be by can do does for from how i in is it of on or that the this to what when where which who why with you your me my we our'.split(
    ' ',
  ),
);

/**
 * The embedded `local` LLM: a stand-in WITHOUT a model. It answers from the retrieved context alone,
 * quoting the sentences that share the most words with the question, each with its source title, and
 * streams the answer in several deltas. It reads the context items that libs/context-budget renders
 * (`renderContextItem`) from the last user message.
 *
 * Usage is reported as `counter` counts the request and the answer (tokens).
 */
export class LocalChatProvider implements ChatProvider {
  readonly provider = 'local' as const;

  constructor(private readonly options: LocalChatOptions) {}

  async *streamChat(request: ChatRequest): AsyncIterable<ChatChunk> {
    const answer = composeAnswer(request.messages, this.options.maxPassages ?? 4);
    const words = answer.split(/(?<=\s)/);
    const per = this.options.wordsPerChunk ?? 4;
    const delay = this.options.chunkDelayMs ?? 0;
    for (let i = 0; i < words.length; i += per) {
      if (request.signal?.aborted) throw abortError(request.signal);
      if (delay > 0 && i > 0) await sleep(delay, request.signal);
      yield { type: 'delta', text: words.slice(i, i + per).join('') };
    }
    yield {
      type: 'usage',
      promptTokens: this.options.counter.countMessages(request.messages),
      completionTokens: this.options.counter.countText(answer),
    };
  }
}

/** Builds the stand-in's answer text from the request (deterministic). */
export function composeAnswer(messages: readonly ChatMessage[], maxPassages: number): string {
  const last = [...messages].reverse().find((m) => m.role === 'user');
  if (!last) return 'I have no question to answer.';
  const { passages, question } = parseUserMessage(last.content);
  const priorQuestions = messages.filter((m) => m.role === 'user' && m !== last).map((m) => m.content);
  const terms = keywords(question);
  const scored: Array<{ sentence: string; passage: ContextPassage; score: number; order: number }> = [];
  let order = 0;
  for (const passage of passages) {
    for (const sentence of sentences(passage.text)) {
      const words = keywords(sentence);
      let hits = 0;
      for (const term of terms) if (words.has(term)) hits += 1;
      // Earlier (better-ranked) passages win ties.
      scored.push({ sentence, passage, score: hits - passage.index * 0.01, order: order++ });
    }
  }
  scored.sort((a, b) => b.score - a.score || a.order - b.order);
  const chosen = scored.filter((s) => s.score > 0).slice(0, maxPassages);
  const lines: string[] = [];
  if (priorQuestions.length > 0) {
    lines.push(`(Follow-up; this prompt carried ${priorQuestions.length} earlier turn${priorQuestions.length === 1 ? '' : 's'}.)`);
  }
  if (chosen.length === 0) {
    lines.push(
      passages.length === 0
        ? 'The retrieved context is empty, so I cannot answer from this project\'s knowledge.'
        : `The closest retrieved passage is from "${passages[0].title}": ${truncate(passages[0].text, 300)}`,
    );
  } else {
    lines.push('From the retrieved context:');
    for (const c of chosen) lines.push(`- ${truncate(c.sentence, 400)} [${c.passage.index}: ${c.passage.title}]`);
  }
  const cited = [...new Map((chosen.length ? chosen.map((c) => c.passage) : passages.slice(0, 1)).map((p) => [p.index, p])).values()];
  if (cited.length) lines.push(`Sources: ${cited.map((p) => `[${p.index}] ${p.title}`).join('; ')}`);
  return lines.join('\n');
}

/**
 * Splits the final user message into its context passages and the question. The message is the
 * rendered items of libs/context-budget (`[n] kind · title · score 0.83`, the text, a blank line),
 * then the question: so the question is what follows the last blank line after the last header.
 */
export function parseUserMessage(content: string): { passages: ContextPassage[]; question: string } {
  const header = /^\[(\d+)\] (?:insight|recommendation|knowledge) · (.*?) · score -?[\d.]+$/gm;
  const heads: Array<{ index: number; title: string; start: number; end: number }> = [];
  let m: RegExpExecArray | null;
  while ((m = header.exec(content)) !== null) {
    heads.push({ index: Number(m[1]), title: m[2].trim(), start: m.index, end: m.index + m[0].length });
  }
  if (heads.length === 0) return { passages: [], question: content.trim() };
  const lastBreak = content.lastIndexOf('\n\n');
  const questionStart = lastBreak > heads[heads.length - 1].end ? lastBreak + 2 : content.length;
  const passages = heads.map((h, i) => ({
    index: h.index,
    title: h.title,
    text: content.slice(h.end, i + 1 < heads.length ? heads[i + 1].start : questionStart).trim(),
  }));
  return { passages, question: content.slice(questionStart).trim() };
}

function keywords(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of text.toLowerCase().normalize('NFKC').split(/[^\p{L}\p{N}_]+/u)) {
    if (w.length > 1 && !STOPWORDS.has(w)) out.add(w);
  }
  return out;
}

function sentences(text: string): string[] {
  return text
    .replace(/```[\s\S]*?```/g, ' ')
    .split(/(?<=[.!?。！？])\s+|\n{2,}/u)
    // One line each, without the passage's own list markers or heading hashes (the answer adds its own).
    .map((s) => s.replace(/\s+/g, ' ').trim().replace(/^(?:[-*+]|#{1,6}|\d+\.)\s+/, ''))
    .filter((s) => s.length >= 20);
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
