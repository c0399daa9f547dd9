import { type ChatMessage, relevanceEvidence, type RetrievedItem, type TokenCounter } from '@ask/ask-contracts';
import { assembleMessages, renderContextItem } from './assemble';
import { planPrompt, type PromptPlan } from './plan-prompt';
import {
  joinMemory,
  MEMORY_ACK,
  MEMORY_FOOTER,
  MEMORY_HEADER,
  type MemoryMode,
  type MemoryPart,
  renderSessionSummary,
  renderSummaryLine,
} from './plan-memory';
import type { RelevancePolicy } from './relevance';
import { APPROXIMATE_MARGIN_PERCENT, EXACT_MARGIN_PERCENT, type SafetyMargin } from './budget';
import type { ResolvedModel } from '@ask/model-catalog';

/** The default system prompt when a project sets none. Its tokens ride inside the 600-token reserve. */
export const DEFAULT_SYSTEM_PROMPT =
  'You answer questions about one project using only the retrieved context (its insights, ' +
  'recommendations and knowledge documents) and the conversation so far. Cite the numbered sources ' +
  'you use, like [2]. If the context does not contain the answer, say so plainly.';

/** One stored turn as the sizer sees it: its id and its two texts (persistence `StoredMessage` fits). */
export interface SizableTurn {
  id: string;
  question: string;
  answer: string;
}

/** Everything the sizer needs for one turn. Token figures are tokens; `scale` is a factor ≥ 1. */
export interface SizingInput<T extends SizableTurn = SizableTurn> {
  model: ResolvedModel;
  /**
   * The planning counter: an exact one, or the per-script calibrated estimate
   * (token-counting `ScriptCalibratedCounter`), whose `countText` already applies calibration.
   */
  counter: TokenCounter;
  /** True when the count is exact (local exact tokenizer, or verified by the provider's count endpoint). */
  exact: boolean;
  /**
   * The safety margin for this prompt, asked once every text of it has been counted (the calibrated
   * estimate sizes it from what it applied: token-counting `ScriptCalibratedCounter.safetyMargin`).
   * `window` and `maxTokens` are tokens. Absent, or returning undefined: the seed's 5% / 15%.
   * Ignored with an exact counter.
   */
  safetyMargin?: (window: number, maxTokens: number) => SafetyMargin | undefined;
  /**
   * Multiplies every count: 1, or on a re-plan the ratio the provider disclosed (its prompt tokens ÷
   * our planned count of the same request), so that the one retry fits.
   */
  scale?: number;
  maxTokens: number;
  systemPrompt: string;
  question: string;
  /**
   * Earlier turns, oldest first, each with its planning counts under `counter` (from the cached
   * counts) and, when one is stored, its summary with the summary text's tokens under `counter`.
   */
  history: Array<{
    message: T;
    questionTokens: number;
    answerTokens: number;
    summary?: { text: string; tokens: number };
  }>;
  /**
   * Conversation memory: the mode and, when one is stored, the session summary with its text's
   * tokens under `counter` and the id of the newest pair it covers. Absent: mode `off`.
   */
  memory?: { mode: MemoryMode; sessionSummary?: { text: string; tokens: number; coversUpTo: string } };
  /** Ranked items, best first. */
  items: RetrievedItem[];
  maxHistoryMessages?: number | null;
  /** A lower window than the model's, after the provider disclosed a smaller limit (re-budget). */
  windowOverride?: number;
  /** The relevance floor of the project's embedder and method, and its `lowRelevance`; absent: none. */
  relevance?: RelevancePolicy;
}

/** The sized prompt: the plan, the messages to send, and what was kept. */
export interface SizedPrompt<T extends SizableTurn = SizableTurn> {
  plan: PromptPlan;
  messages: ChatMessage[];
  keptItems: RetrievedItem[];
  keptTurns: T[];
  window: number;
  /** Tokens of the question and of the kept items by kind, for a 413's details. */
  figures: { question: number; rag: number; knowledge: number };
  /** The rendered text of each kept item, in prompt order (what calibration records measure). */
  keptItemTexts: string[];
  /** The factor every count was multiplied by (see `SizingInput.scale`). */
  scale: number;
  /** The safety margin planned with and why (`plan.margin` is its tokens). */
  margin: SafetyMargin;
  /** The memory block's text (the user-role message with the quoted summaries), when one was sent. */
  memoryText?: string;
}

/**
 * Counts the new question and the rendered retrieved items (history counts come cached), plans the
 * prompt with libs/context-budget (`planPrompt`: the seed's trimming and RAG shrink with memory off,
 * one selection by value per token with memory on), and assembles the messages.
 * @throws AskError 413 context_overflow when even the question with one item cannot fit.
 */
export function sizePrompt<T extends SizableTurn>(input: SizingInput<T>): SizedPrompt<T> {
  const factor = input.scale !== undefined && input.scale > 1 ? input.scale : 1;
  const scale = (n: number) => (factor > 1 ? Math.ceil(n * factor) : n);
  const window = input.windowOverride ?? input.model.window;
  const rendered = input.items.map((item, i) => renderContextItem(toRenderable(item), i));
  const questionTokens = scale(input.counter.countText(input.question));
  const itemTokens = input.items.map((item, i) => scale(renderedItemTokens(input.counter, item, rendered[i])));
  const memoryOn = input.memory !== undefined && input.memory.mode !== 'off';
  const session = memoryOn ? input.memory?.sessionSummary : undefined;
  const covered = session ? input.history.findIndex((h) => h.message.id === session.coversUpTo) : -1;
  const sessionPart = session && covered >= 0 ? renderSessionSummary(covered + 1, session.text) : undefined;
  const systemPromptTokens = scale(input.counter.countText(input.systemPrompt));
  const headerTokens = memoryOn
    ? scale(
        input.counter.countText(MEMORY_HEADER) +
          input.counter.countText(MEMORY_FOOTER) +
          input.counter.countText(MEMORY_ACK),
      )
    : 0;
  const sessionTokens =
    session && sessionPart ? scale(partTokens(input.counter, sessionPart, session.text, session.tokens)) : 0;
  const summaryTokens = input.history.map((h, i) =>
    h.summary && memoryOn
      ? scale(partTokens(input.counter, renderSummaryLine(i + 1, h.summary.text), h.summary.text, h.summary.tokens))
      : undefined,
  );
  // Every text is counted by now: the counter can say what its counts rest on.
  const margin: SafetyMargin = input.exact
    ? { percent: EXACT_MARGIN_PERCENT, basis: 'exact' }
    : (input.safetyMargin?.(window, input.maxTokens) ?? { percent: APPROXIMATE_MARGIN_PERCENT, basis: 'approximate' });
  // The one relevance judgement judges the retrieval as a whole: every item carries the best item's
  // evidence, so the floor is the "nothing relevant" signal (all items low-relevance, or none).
  const judged =
    input.relevance?.cosineWeight !== undefined
      ? (relevanceEvidence(input.items, { cosineWeight: input.relevance.cosineWeight }) ?? undefined)
      : undefined;
  const plan = planPrompt({
    model: input.model.model,
    window,
    maxTokens: input.maxTokens,
    exact: input.exact,
    ...(margin.basis === 'calibrated' ? { marginPercent: margin.percent } : {}),
    systemPromptTokens,
    questionTokens,
    history: input.history.map((h, i) => ({
      id: h.message.id,
      questionTokens: scale(h.questionTokens),
      answerTokens: scale(h.answerTokens),
      ...(summaryTokens[i] !== undefined ? { summaryTokens: summaryTokens[i] } : {}),
    })),
    items: input.items.map((item, i) => ({
      id: item.id,
      kind: item.kind,
      score: item.score,
      ...(judged !== undefined ? { relevance: judged } : {}),
      tokens: itemTokens[i],
    })),
    perMessageTokens: input.counter.perMessageTokens,
    perRequestTokens: input.counter.perRequestTokens,
    maxHistoryMessages: input.maxHistoryMessages ?? undefined,
    ...(input.relevance ? { relevance: input.relevance } : {}),
    ...(memoryOn && input.memory
      ? {
          memory: {
            mode: input.memory.mode,
            headerTokens,
            ...(session && sessionPart
              ? { sessionSummary: { tokens: sessionTokens, coversUpTo: session.coversUpTo } }
              : {}),
          },
        }
      : {}),
  });
  const summarised = new Set(plan.memory.summarisedTurnIds);
  const memoryParts = [
    ...(plan.memory.sessionSummaryTokens > 0 && sessionPart ? [sessionPart] : []),
    ...input.history.flatMap((h, i) =>
      h.summary && summarised.has(h.message.id) ? [renderSummaryLine(i + 1, h.summary.text)] : [],
    ),
  ];
  const memoryText = memoryParts.length > 0 ? joinMemory(memoryParts) : undefined;
  const keptItemIds = new Set(plan.keptItemIds);
  const keptTurnIds = new Set(plan.keptTurnIds);
  const keptItems = input.items.filter((item) => keptItemIds.has(item.id));
  const keptTurns = input.history.map((h) => h.message).filter((m) => keptTurnIds.has(m.id));
  const messages = assembleMessages({
    systemPrompt: input.systemPrompt,
    contextItems: input.items
      .map((item, i) => ({ item, text: rendered[i] }))
      .filter(({ item }) => keptItemIds.has(item.id))
      .map(({ text }) => text),
    history: keptTurns.map((m) => ({ question: m.question, answer: m.answer })),
    question: input.question,
    memory: memoryText,
  });
  const keptTokens = (knowledge: boolean) =>
    input.items.reduce(
      (sum, item, i) =>
        keptItemIds.has(item.id) && (item.kind === 'knowledge') === knowledge ? sum + itemTokens[i] : sum,
      0,
    );
  const figures = { question: questionTokens, rag: keptTokens(false), knowledge: keptTokens(true) };
  const keptItemTexts = rendered.filter((_, i) => keptItemIds.has(input.items[i].id));
  return {
    plan,
    messages,
    keptItems,
    keptTurns,
    window,
    figures,
    keptItemTexts,
    scale: factor,
    margin,
    ...(memoryText !== undefined ? { memoryText } : {}),
  };
}

/**
 * Tokens of one rendered memory part (a summary line or the session summary section): its head and
 * tail counted now, and its text's cached count (`textTokens`, of `stored`) when quoting left the
 * text as stored, else the quoted text counted now (a header-like line was neutralised). The parts
 * split at newlines, so the sum never under-counts the joined text (see {@link renderedItemTokens}).
 */
function partTokens(counter: TokenCounter, part: MemoryPart, stored: string, textTokens: number): number {
  const text = part.text === stored.trim() ? textTokens : counter.countText(part.text);
  return counter.countText(part.head) + text + counter.countText(part.tail);
}

/**
 * Tokens of one rendered item. When the item carries a count cached under this counter (knowledge
 * chunks, counted at ingestion), only its one-line header and the closing blank line are counted now.
 * Pre-tokenisation splits at those newlines, so the parts add up to the whole or to one token more
 * (a final `.` or `。` may merge with the blank line): the sum never under-counts.
 */
export function renderedItemTokens(counter: TokenCounter, item: RetrievedItem, rendered: string): number {
  const cached = item.tokenCounts?.[counter.id];
  if (cached === undefined) return counter.countText(rendered);
  const header = rendered.slice(0, rendered.indexOf('\n') + 1);
  return counter.countText(header) + cached + counter.countText('\n\n');
}

function toRenderable(item: RetrievedItem) {
  return { id: item.id, kind: item.kind, title: item.title, text: item.text, score: item.score };
}
