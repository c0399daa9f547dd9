import { contextOverflow } from '@ask/ask-errors';
import { type Budget, computeBudget } from './budget';
import {
  coverMemory,
  planMemory,
  type MemoryMode,
  type MemoryPlan,
  type MemoryPlanInput,
  type MemoryTurn,
  type SessionSummaryCost,
} from './plan-memory';
import type { ItemDecision, RelevancePolicy } from './relevance';
import { shrinkContext, type ContextItemCost } from './trim';

/** What `planPrompt` needs. Every count is tokens, counted by the caller with the chosen counter. */
export interface PlanInput {
  /** Model id as the project names it; appears in a 413's details. */
  model: string;
  /** Context window planned against (model-catalog `resolveModel(...).window`). */
  window: number;
  /** Reserved for generation; default 2048 (seed 000). */
  maxTokens?: number;
  /** Reserve for the system prompt and scaffolding; default 600 (seed 000). */
  reserve?: number;
  /** True with an exact counter (5% margin), false with the approximate one (15%). */
  exact: boolean;
  /** A safety margin sized from calibration evidence, percent of the window (see `computeBudget`); absent: 5% / 15%. */
  marginPercent?: number;
  /** Tokens of the system prompt text. Never dropped. */
  systemPromptTokens: number;
  /** Tokens of the current question text. Always sent, last. */
  questionTokens: number;
  /** Earlier pairs of the session, oldest → newest, each with its summary's tokens when one is stored. */
  history: readonly MemoryTurn[];
  /** Retrieved items, in any order (ranked here by score). */
  items: readonly ContextItemCost[];
  /** Framing tokens per message (the counter's `perMessageTokens`); default 0. */
  perMessageTokens?: number;
  /** Framing tokens per request (the counter's `perRequestTokens`); default 0. */
  perRequestTokens?: number;
  /** Optional cap on earlier messages sent (seed 001); keeps floor(n / 2) pairs at most. */
  maxHistoryMessages?: number;
  /** Conversation memory; absent: mode `off`, seed 000 trimming. */
  memory?: {
    mode: MemoryMode;
    /** Tokens of the memory message's header (`MEMORY_HEADER`). */
    headerTokens: number;
    /** The stored session summary, for mode `compaction`. */
    sessionSummary?: SessionSummaryCost;
  };
  /**
   * The relevance floor (`relevanceFloor` per embedder and method) and what happens
   * below it. Absent: every item counts as relevant. With memory `off` only `below: 'never'` applies
   * (it leaves such items out before the seed's plan).
   */
  relevance?: RelevancePolicy;
}

/** What goes into the prompt and why. Every figure is tokens. */
export interface PromptPlan extends Budget {
  /** Tokens the kept history could use: available − system prompt beyond the reserve − question − kept items. */
  historyBudget: number;
  /** Tokens of everything sent: system prompt, kept pairs, kept items, question, with all framing. */
  used: number;
  /** Pairs sent verbatim, oldest → newest (a suffix of the session). */
  keptTurnIds: string[];
  /** Pairs sent verbatim. */
  turnsKept: number;
  /** Pairs not represented at all (neither verbatim, nor summarised, nor under the session summary). */
  turnsDropped: number;
  /** Pairs sent as their summary. */
  turnsSummarised: number;
  /** Pairs the session summary stands for. */
  turnsCompacted: number;
  /** What the history carries, pair by pair (`planMemory`). */
  memory: MemoryPlan;
  /** Kept items, best first. */
  keptItemIds: string[];
  /** Dropped items, best first. */
  droppedItemIds: string[];
  contextKept: number;
  contextDropped: number;
  /** Every item's decision with its reason, best first. */
  items: ItemDecision[];
  /** The relevance floor applied, or null when none was. */
  relevanceFloor: number | null;
  /**
   * Tokens memory's coverage could take before the items beyond the floor ({@link MEMORY_SHARE} of
   * the room after the floor item); 0 with memory `off`.
   */
  memoryRoom: number;
  /**
   * The newest pair the session summary must reach past after this ask (the summary job's
   * `evictedUpTo`), or null: see `jointSelection`. Always null with memory `off`.
   */
  evictedUpTo: string | null;
}

function checkCount(name: string, value: number): void {
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a whole number of tokens ≥ 0, got ${value}`);
  }
}

function checkInput(input: PlanInput): void {
  checkCount('systemPromptTokens', input.systemPromptTokens);
  checkCount('questionTokens', input.questionTokens);
  checkCount('perMessageTokens', input.perMessageTokens ?? 0);
  checkCount('perRequestTokens', input.perRequestTokens ?? 0);
  if (input.maxHistoryMessages !== undefined) checkCount('maxHistoryMessages', input.maxHistoryMessages);
  for (const turn of input.history) {
    checkCount(`history[${turn.id}].questionTokens`, turn.questionTokens);
    checkCount(`history[${turn.id}].answerTokens`, turn.answerTokens);
    if (turn.summaryTokens !== undefined) checkCount(`history[${turn.id}].summaryTokens`, turn.summaryTokens);
  }
  if (input.memory) {
    checkCount('memory.headerTokens', input.memory.headerTokens);
    if (input.memory.sessionSummary) checkCount('memory.sessionSummary.tokens', input.memory.sessionSummary.tokens);
  }
  if (input.relevance && !Number.isFinite(input.relevance.floor)) {
    throw new RangeError('relevance.floor must be finite');
  }
  for (const item of input.items) {
    checkCount(`items[${item.id}].tokens`, item.tokens);
    if (!Number.isFinite(item.score)) throw new RangeError(`items[${item.id}].score must be finite`);
  }
  // The plan names what it keeps by id, so an id seen twice would make the plan ambiguous.
  checkUnique(
    'history',
    input.history.map((turn) => turn.id),
  );
  checkUnique(
    'items',
    input.items.map((item) => item.id),
  );
}

function checkUnique(name: string, ids: readonly string[]): void {
  if (new Set(ids).size !== ids.length) throw new RangeError(`${name} ids must be unique`);
}

/** Items best first; ties keep retrieval order (as `shrinkContext`). */
function rank(items: readonly ContextItemCost[]): ContextItemCost[] {
  return items
    .map((item, order) => ({ item, order }))
    .sort((a, b) => b.item.score - a.item.score || a.order - b.order)
    .map(({ item }) => item);
}

/** What the window holds: the kept items best first, the history, and each item's decision. */
interface Selection {
  kept: ContextItemCost[];
  dropped: ContextItemCost[];
  decisions: Map<string, ItemDecision['reason']>;
  memory: MemoryPlan;
  /** Tokens memory's coverage may take before the items beyond the floor (0 with memory `off`). */
  memoryRoom: number;
  /** See {@link PromptPlan.evictedUpTo}. */
  evictedUpTo: string | null;
}

const overflow = (input: PlanInput, budget: Budget, kept: readonly ContextItemCost[]) => {
  const rag = kept.filter((i) => i.kind !== 'knowledge').reduce((sum, i) => sum + i.tokens, 0);
  const all = kept.reduce((sum, i) => sum + i.tokens, 0);
  return contextOverflow({
    model: input.model,
    window: budget.window,
    question: input.questionTokens,
    rag,
    knowledge: all - rag,
  });
};

/** What the relevance floor applies to: the item's relevance evidence when it carries one, else its score. */
function relevanceOf(item: ContextItemCost): number {
  return item.relevance ?? item.score;
}

/**
 * Memory `off` (seed 000): the items shrink lowest score first until they fit with no history (floor
 * one item), and the history is trimmed newest first into what they leave.
 */
function seedSelection(
  input: PlanInput,
  budget: Budget,
  room: number,
  items: readonly ContextItemCost[],
  memory: Omit<MemoryPlanInput, 'budget'>,
): Selection {
  const context = shrinkContext(items, room);
  if (!context.fits) throw overflow(input, budget, context.kept);
  const decisions = new Map<string, ItemDecision['reason']>();
  for (const item of context.kept) decisions.set(item.id, 'fits');
  for (const item of context.dropped) decisions.set(item.id, 'no-room');
  return {
    ...context,
    decisions,
    memory: planMemory({ ...memory, budget: room - context.tokens }),
    memoryRoom: 0,
    evictedUpTo: null,
  };
}

/**
 * The share of the room (after the floor item) that memory's coverage may take before the other
 * relevant items. Chosen, not fitted: at an 8,192-token window (about 3,900 tokens of room after the
 * question and the floor item) a third, about 1,300 tokens, leaves the default top-K 8 of median
 * chunks room beside it (8 × 315 = 2,520 tokens; the turn 31 measured 2,518), however long the
 * session; it holds the session summary (576 tokens at most by default) and about 20 English or 12
 * Chinese summary lines. Half (1,950 tokens) still left the answering chunk ranked 7th of a Chinese
 * session out (bench/memory --kb --zh-sessions, session 5 turn 35, looked at). What does not fit the
 * share rolls into the session summary (`evictedUpTo`); in a larger window both sides grow.
 */
export const MEMORY_SHARE = 1 / 3;

/**
 * With conversation memory (`per-turn` or `compaction`), the window is filled by value per token, each class
 * in full before the next, each best first, each stopping at the first thing that does not fit:
 *
 * 1. the best item at or above the relevance floor (seed 000's floor of one item; 413 when it does
 *    not fit with the question);
 * 2. the coverage of the pairs (`coverMemory`: summaries, the session summary, verbatim only for
 *    pairs with no summary), newest first, in {@link MEMORY_SHARE} of what is left: tens of tokens
 *    that carry what the user said;
 * 3. the other items at or above the floor, best first: an item that may answer the question
 *    outranks a summary line too old to fit memory's share (a line of the session's distant past,
 *    which the session summary can carry for a fraction of its tokens);
 * 4. the rest of the coverage, in what the items left (every pair, when it fits);
 * 5. pairs upgraded from summary to verbatim, newest first (`planMemory`);
 * 6. items below the floor, best first, in what memory could not use (`below: 'never'`: none).
 */
function jointSelection(
  input: PlanInput,
  budget: Budget,
  room: number,
  items: readonly ContextItemCost[],
  memory: Omit<MemoryPlanInput, 'budget'>,
): Selection {
  const floor = input.relevance?.floor ?? -Infinity;
  const ranked = rank(items);
  const relevant = ranked.filter((item) => relevanceOf(item) >= floor);
  const low = ranked.filter((item) => relevanceOf(item) < floor);
  const decisions = new Map<string, ItemDecision['reason']>();
  const kept: ContextItemCost[] = [];
  const first = relevant[0];
  if (room < (first?.tokens ?? 0)) throw overflow(input, budget, first ? [first] : []);
  let left = room;
  if (first) {
    kept.push(first);
    decisions.set(first.id, 'floor');
    left -= first.tokens;
  }
  const memoryRoom = Math.floor(Math.max(0, left) * MEMORY_SHARE);
  const inShare = coverMemory({ ...memory, budget: memoryRoom });
  left -= inShare.tokens;
  let open = true;
  for (const item of relevant.slice(1)) {
    open = open && item.tokens <= left;
    decisions.set(item.id, open ? 'relevant' : 'no-room');
    if (open) {
      kept.push(item);
      left -= item.tokens;
    }
  }
  // The share's coverage grows into what the items left, in its form (the session summary it chose stays).
  const covered = coverMemory({ ...memory, budget: left + inShare.tokens }, inShare);
  left -= covered.tokens - inShare.tokens;
  const plan = planMemory({ ...memory, budget: left + covered.tokens }, covered);
  left -= plan.tokens - covered.tokens;
  open = true;
  for (const item of low) {
    open = open && item.tokens <= left;
    decisions.set(item.id, open ? 'spare-room' : 'below-floor');
    if (open) {
      kept.push(item);
      left -= item.tokens;
    }
  }
  const keptIds = new Set(kept.map((item) => item.id));
  return {
    kept: ranked.filter((item) => keptIds.has(item.id)),
    dropped: ranked.filter((item) => !keptIds.has(item.id)),
    decisions,
    memory: plan,
    memoryRoom,
    evictedUpTo: evictedUpTo(memory.history, memory.mode, inShare, plan),
  };
}

/**
 * The newest pair the session summary must reach past after this ask, or null (docs/ARCHITECTURE.md
 * "One budget"): in both memory modes the newest pair whose summary did not fit memory's share
 * (`inShare`, the pairs the summary job rolls into the session summary, so that they are not lost
 * to the next asks when the items take the rest), or that the plan dropped; in `compaction` also the
 * newest pair sent as a summary line (that mode rolls a pair into the session summary as soon as it
 * no longer rides verbatim, so its memory stays one bounded text).
 */
function evictedUpTo(
  history: readonly MemoryTurn[],
  mode: MemoryMode,
  inShare: MemoryPlan,
  plan: MemoryPlan,
): string | null {
  const candidates = [inShare.droppedTurnIds.at(-1), plan.droppedTurnIds.at(-1)];
  if (mode === 'compaction') candidates.push(plan.summarisedTurnIds.at(-1));
  const position = new Map(history.map((turn, i) => [turn.id, i]));
  let newest: string | null = null;
  for (const id of candidates) {
    if (id !== undefined && (newest === null || (position.get(id) ?? -1) > (position.get(newest) ?? -1))) newest = id;
  }
  return newest;
}

/**
 * Plans one /ask request against the model's window, seed 000 "How the budget is computed" and "How
 * trimming works":
 *
 * 1. `computeBudget`: available = window − max_tokens − reserve − margin.
 * 2. The reserve covers the system message (text + framing) and the per-request framing; anything
 *    beyond it is taken from `available`. The system prompt is never dropped.
 * 3. Memory `off` (seed 000): the question (with its message framing) and the retrieved items must
 *    fit with no history at all; if not, the RAG shrink drops the lowest-scoring item until they do,
 *    floor one item. What is left is the history budget: pairs are kept newest → oldest, whole pairs
 *    only, stopping at the first that does not fit, capped by `maxHistoryMessages`.
 * 4. Memory `per-turn` / `compaction`: one selection by value per token over the items
 *    and every pair's forms ({@link jointSelection}, docs/ARCHITECTURE.md "One budget"): the floor
 *    item, then the pairs represented in memory's share of the room, then the other relevant items,
 *    then the rest of the pairs represented, then verbatim pairs, then items below the relevance
 *    floor in the room left.
 *
 * With `relevance.below` `never`, items below the floor are left out first (`excluded`), in any mode.
 * Never mutates its input. Guarantees used + maxTokens ≤ window − margin.
 *
 * @throws AskError 413 `context_overflow` when the question with one item (or with none, when none was
 *   retrieved, or none is at or above the relevance floor with memory on) does not fit; details
 *   `model=… window=… question=… rag=… knowledge=…` give the question tokens and the tokens of the
 *   items still kept at that point (rag: insights + recommendations).
 * @throws RangeError on a budget RangeError (see `computeBudget`), a negative / fractional count, a
 *   non-finite score or floor, or an id used twice among the history pairs or among the items.
 */
export function planPrompt(input: PlanInput): PromptPlan {
  checkInput(input);
  const budget = computeBudget(input);
  const perMessage = input.perMessageTokens ?? 0;
  const fixed = input.systemPromptTokens + perMessage + (input.perRequestTokens ?? 0);
  const questionCost = input.questionTokens + perMessage;
  const room = budget.available - Math.max(0, fixed - budget.reserve) - questionCost;

  const relevance = input.relevance;
  const excluded =
    relevance?.below === 'never' ? input.items.filter((item) => relevanceOf(item) < relevance.floor) : [];
  const candidates = excluded.length ? input.items.filter((item) => !excluded.includes(item)) : input.items;
  const mode = input.memory?.mode ?? 'off';
  const memory = {
    history: input.history,
    mode,
    perMessageTokens: perMessage,
    headerTokens: input.memory?.headerTokens ?? 0,
    maxPairs: input.maxHistoryMessages === undefined ? Infinity : Math.floor(input.maxHistoryMessages / 2),
    sessionSummary: input.memory?.sessionSummary,
  };
  const selection =
    mode === 'off'
      ? seedSelection(input, budget, room, candidates, memory)
      : jointSelection(input, budget, room, candidates, memory);
  for (const item of excluded) selection.decisions.set(item.id, 'excluded');
  const dropped = [...selection.dropped, ...rank(excluded)];
  const contextTokens = selection.kept.reduce((sum, item) => sum + item.tokens, 0);
  const plan = selection.memory;

  return {
    ...budget,
    historyBudget: room - contextTokens,
    used: fixed + plan.tokens + contextTokens + questionCost,
    keptTurnIds: plan.verbatimTurnIds,
    turnsKept: plan.verbatimTurnIds.length,
    turnsDropped: plan.droppedTurnIds.length,
    turnsSummarised: plan.summarisedTurnIds.length,
    turnsCompacted: plan.compactedTurnIds.length,
    memory: plan,
    keptItemIds: selection.kept.map((item) => item.id),
    droppedItemIds: dropped.map((item) => item.id),
    contextKept: selection.kept.length,
    contextDropped: dropped.length,
    items: rank(input.items).map((item) => {
      const reason = selection.decisions.get(item.id) as ItemDecision['reason'];
      const kept = reason === 'floor' || reason === 'relevant' || reason === 'spare-room' || reason === 'fits';
      return { id: item.id, kind: item.kind, score: item.score, tokens: item.tokens, kept, reason };
    }),
    relevanceFloor: relevance ? relevance.floor : null,
    memoryRoom: selection.memoryRoom,
    evictedUpTo: selection.evictedUpTo,
  };
}
