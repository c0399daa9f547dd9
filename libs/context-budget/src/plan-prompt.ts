import { contextOverflow } from '@ask/ask-errors';
import { type Budget, computeBudget } from './budget';
import { planMemory, type MemoryMode, type MemoryPlan, type MemoryTurn, type SessionSummaryCost } from './plan-memory';
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

/**
 * Plans one /ask request against the model's window, seed 000 "How the budget is computed" and "How
 * trimming works":
 *
 * 1. `computeBudget`: available = window − max_tokens − reserve − margin.
 * 2. The reserve covers the system message (text + framing) and the per-request framing; anything
 *    beyond it is taken from `available`. The system prompt is never dropped.
 * 3. The question (with its message framing) and the retrieved items must fit with no history at all;
 *    if not, the RAG shrink drops the lowest-scoring item until they do, floor one item.
 * 4. What is left is the history budget: pairs are kept newest → oldest, whole pairs only, stopping
 *    at the first that does not fit, capped by `maxHistoryMessages`; with conversation memory
 *    (`memory`), older pairs then ride as their summaries and, in `compaction`, under the session
 *    summary (`planMemory`). Summaries are counted against the history budget.
 *
 * Never mutates its input. Guarantees used + maxTokens ≤ window − margin.
 *
 * @throws AskError 413 `context_overflow` when the question with one item (or with none, when none was
 *   retrieved) does not fit; details `model=… window=… question=… rag=… knowledge=…` give the question
 *   tokens and the tokens of the items still kept at that point (rag: insights + recommendations).
 * @throws RangeError on a budget RangeError (see `computeBudget`), a negative / fractional count, a
 *   non-finite score, or an id used twice among the history pairs or among the items.
 */
export function planPrompt(input: PlanInput): PromptPlan {
  checkInput(input);
  const budget = computeBudget(input);
  const perMessage = input.perMessageTokens ?? 0;
  const fixed = input.systemPromptTokens + perMessage + (input.perRequestTokens ?? 0);
  const questionCost = input.questionTokens + perMessage;
  const room = budget.available - Math.max(0, fixed - budget.reserve) - questionCost;

  const context = shrinkContext(input.items, room);
  if (!context.fits) {
    const rag = context.kept.filter((i) => i.kind !== 'knowledge').reduce((sum, i) => sum + i.tokens, 0);
    throw contextOverflow({
      model: input.model,
      window: budget.window,
      question: input.questionTokens,
      rag,
      knowledge: context.tokens - rag,
    });
  }

  const historyBudget = room - context.tokens;
  const maxPairs = input.maxHistoryMessages === undefined ? Infinity : Math.floor(input.maxHistoryMessages / 2);
  const memory = planMemory({
    history: input.history,
    budget: historyBudget,
    mode: input.memory?.mode ?? 'off',
    perMessageTokens: perMessage,
    headerTokens: input.memory?.headerTokens ?? 0,
    maxPairs,
    sessionSummary: input.memory?.sessionSummary,
  });

  return {
    ...budget,
    historyBudget,
    used: fixed + memory.tokens + context.tokens + questionCost,
    keptTurnIds: memory.verbatimTurnIds,
    turnsKept: memory.verbatimTurnIds.length,
    turnsDropped: memory.droppedTurnIds.length,
    turnsSummarised: memory.summarisedTurnIds.length,
    turnsCompacted: memory.compactedTurnIds.length,
    memory,
    keptItemIds: context.kept.map((item) => item.id),
    droppedItemIds: context.dropped.map((item) => item.id),
    contextKept: context.kept.length,
    contextDropped: context.dropped.length,
  };
}
