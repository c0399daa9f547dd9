import type { MemoryMode } from './memory';
import type { RetrievalLegs, RetrievalMethod } from './retrieval';

/**
 * Events on an ask's stream (Redis stream `ask:{askId}:events`), relayed to the dashboard as SSE.
 * Every event carries the Redis stream id as its SSE id, so `Last-Event-ID` resumes without gap or repeat.
 */

/** Redis key of an ask's event stream. */
export const askStreamKey = (askId: string): string => `ask:${askId}:events`;

export interface AcceptedEvent {
  askId: string;
  sessionId: string;
}

export interface RetrievedEvent {
  counts: { insight: number; recommendation: number; knowledge: number };
  /**
   * The best few items: kind, id, title, source (knowledge source uri) and cosine similarity; with
   * full-text or hybrid retrieval also the legs that found each item, their ranks and scores.
   */
  top: Array<{ kind: string; id: string; title: string; score: number; source?: string; legs?: RetrievalLegs }>;
  /** The retrieval method used (`vector` when absent: streams written before the setting existed). */
  method?: RetrievalMethod;
}

/** What the budget planner decided for this turn. All figures are tokens. */
export interface BudgetEvent {
  provider: string;
  model: string;
  /** Effective context window (catalog, project override, or the lower cap). */
  window: number;
  maxTokens: number;
  reserve: number;
  /** The safety margin, tokens: ⌈window × marginPercent / 100⌉. */
  margin: number;
  /** The margin as a percent of the window; absent on streams written before it was reported. */
  marginPercent?: number;
  /**
   * Why that margin: `exact` (an exact counter, 5%), `approximate` (the estimate without enough
   * evidence, 15%), `calibrated` (sized from the spread of the project's own observed ratios, floor
   * 5%: docs/ARCHITECTURE.md "The margin follows the evidence").
   */
  marginBasis?: 'exact' | 'approximate' | 'calibrated';
  /** `calibrated`: the largest spread of the classes applied (a share of the class's largest request). */
  marginSpread?: number;
  counter: 'exact' | 'approximate';
  counterId: string;
  /**
   * The largest calibration factor applied to any text of this prompt (1 when none): the per-script
   * estimate multiplies a text's floor estimate by its script class's learned factor.
   */
  calibration: number;
  /** The factors learned for this model per script class (`{ cjk: 1.316 }`); `{}` when none or exact. */
  calibrationByScript?: Record<string, number>;
  /** The window the provider disclosed earlier for this project's model, when it lowered `window`. */
  rememberedWindow?: number;
  /** On a re-plan: the factor every count was multiplied by (the provider's count ÷ ours). */
  observedRatio?: number;
  available: number;
  /** Tokens of what is sent: system prompt, kept turns, kept context and the question, with framing. */
  used: number;
  turnsKept: number;
  turnsDropped: number;
  contextKept: number;
  contextDropped: number;
  /** Ids of the stored messages (earlier turns) this prompt carried verbatim, oldest first. */
  keptTurnIds: string[];
  /** What conversation memory carried; absent on streams written before memory existed. */
  memory?: BudgetMemory;
  /**
   * Every retrieved item's decision with its reason, best first (so a client can say why an item was
   * left out); absent on streams written
   * before it existed (then `contextKept` / `contextDropped` are all there is).
   */
  items?: BudgetItemDecision[];
  /** The relevance floor applied (cosine similarity), null when the embedder has none; absent on older streams. */
  relevanceFloor?: number | null;
}

/**
 * Why a retrieved item was kept or left out:
 * - kept `floor`: the best item at or above the relevance floor (always kept: seed 000's floor of one);
 * - kept `relevant`: at or above the floor, and it fits once every earlier pair is represented;
 * - kept `spare-room`: below the floor, in room conversation memory could not use;
 * - kept `fits`: memory `off`, seed 000's plan (every item that fits with no history);
 * - left out `no-room`: does not fit after what outranks it (memory `off`: the seed's RAG shrink);
 * - left out `below-floor`: below the floor, and sending it would displace memory;
 * - left out `excluded`: below the floor, and the project's `lowRelevance` is `never`.
 */
export type BudgetItemReason = 'floor' | 'relevant' | 'spare-room' | 'fits' | 'no-room' | 'below-floor' | 'excluded';

/** One retrieved item's decision in a `budget` event. `tokens` as planned; `score` its cosine similarity. */
export interface BudgetItemDecision {
  id: string;
  kind: string;
  score: number;
  tokens: number;
  kept: boolean;
  reason: BudgetItemReason;
}

/**
 * The history of one prompt, turn by turn (1-based positions in the session, ranges inclusive,
 * oldest first): e.g. summarised `[[1, 12]]`, verbatim `[[13, 18]]`. The lists partition the turns.
 */
export interface BudgetMemory {
  mode: MemoryMode;
  /** Pairs sent verbatim / as their summary / under the session summary / not at all. */
  verbatimPairs: number;
  summarisedPairs: number;
  compactedPairs: number;
  droppedPairs: number;
  verbatim: Array<[number, number]>;
  summarised: Array<[number, number]>;
  /** Turns the session summary stood for (`[[1, n]]`), or `[]`. */
  compacted: Array<[number, number]>;
  dropped: Array<[number, number]>;
  /** True when the session summary rode along, with its tokens. */
  sessionSummary: boolean;
  sessionSummaryTokens: number;
  /** Tokens of the memory message (summaries, session summary, framing), counted against the history budget. */
  memoryTokens: number;
}

export interface DeltaEvent {
  text: string;
}

/**
 * Sent when an attempt restarts after a worker crash or an upstream retry: the client discards the
 * text of the answer received so far; the next deltas restart the answer from its first word.
 */
export interface ResetEvent {
  attempt: number;
  reason: string;
}

export interface DoneEvent {
  messageId: string;
  /** As the provider reported them (null when it reported none). */
  usage: { promptTokens: number | null; completionTokens: number | null };
  /** Sources cited by the answer, best first. */
  sources: Array<{ kind: string; id: string; title: string; source?: string }>;
  /** Set when the provider's reported prompt tokens are far below what we sent (silent truncation). */
  warning?: string;
}

/** The typed error body of libs/ask-errors, plus its HTTP status. */
export interface ErrorEvent {
  status: number;
  code: string;
  error: string;
  details?: string;
}

export interface AskEventMap {
  accepted: AcceptedEvent;
  retrieved: RetrievedEvent;
  budget: BudgetEvent;
  delta: DeltaEvent;
  reset: ResetEvent;
  done: DoneEvent;
  error: ErrorEvent;
}

export type AskEventType = keyof AskEventMap;

/** An event as read back from the stream. `id` is the Redis stream id. */
export interface AskEvent<T extends AskEventType = AskEventType> {
  id: string;
  type: T;
  data: AskEventMap[T];
}

/** Events after which the stream has ended. */
export const TERMINAL_EVENTS: ReadonlySet<AskEventType> = new Set(['done', 'error']);

/**
 * The prompt's input limit of a `budget` event, in tokens: `window − maxTokens − margin`
 * (= `available + reserve`). `used` (system prompt included) never exceeds it; `available` is net of
 * the reserve that holds the system prompt, so it is not the prompt's ceiling.
 */
export function promptInputLimit(budget: Pick<BudgetEvent, 'window' | 'maxTokens' | 'margin'>): number {
  return budget.window - budget.maxTokens - budget.margin;
}
