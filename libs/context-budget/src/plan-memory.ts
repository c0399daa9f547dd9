import type { MemoryMode } from '@ask/ask-contracts';
import type { HistoryTurn } from './trim';

export type { MemoryMode } from '@ask/ask-contracts';

/** One earlier pair with, when a summary is stored for it, the tokens of its rendered summary line. */
export interface MemoryTurn extends HistoryTurn {
  /** Tokens of the pair's summary as rendered in the memory message (`renderSummaryLine`); absent: no summary. */
  summaryTokens?: number;
}

/** The session summary as the planner sees it. */
export interface SessionSummaryCost {
  /** Tokens of the rendered session summary section (`renderSessionSummary`). */
  tokens: number;
  /** Id of the newest pair the summary covers (it covers every pair up to and including it). */
  coversUpTo: string;
}

/** What `planMemory` needs. Every figure is tokens. */
export interface MemoryPlanInput {
  /** Earlier pairs, oldest → newest. */
  history: readonly MemoryTurn[];
  /** Tokens the history may use (the plan's `historyBudget`); ≤ 0 keeps nothing. */
  budget: number;
  mode: MemoryMode;
  /** Framing tokens per message; a verbatim pair is two messages, the memory message one. */
  perMessageTokens?: number;
  /** Tokens of the memory message's header, charged once (with one message framing) when any summary rides. */
  headerTokens?: number;
  /** Cap on verbatim pairs (seed 001's `maxHistoryMessages` / 2); summaries are not capped by it. */
  maxPairs?: number;
  /** The stored session summary (mode `compaction` only). */
  sessionSummary?: SessionSummaryCost;
}

/** What the history carries. Pair ids are oldest → newest in every list; the lists partition the history. */
export interface MemoryPlan {
  mode: MemoryMode;
  /** Pairs sent as they are (a suffix of the session). */
  verbatimTurnIds: string[];
  /** Pairs sent as their summary (the pairs just older than the verbatim ones). */
  summarisedTurnIds: string[];
  /** Pairs the session summary stands for (every pair up to its `coversUpTo`). */
  compactedTurnIds: string[];
  /** Pairs not represented at all. */
  droppedTurnIds: string[];
  /** Tokens of the session summary section when it rides along, else 0. */
  sessionSummaryTokens: number;
  /** Tokens of the memory message (framing, header, session summary, summary lines); 0 when none is sent. */
  memoryTokens: number;
  /** Tokens of everything the history sends: verbatim pairs with framing + `memoryTokens`. */
  tokens: number;
}

interface Walk {
  verbatim: number;
  summarised: number;
  memoryTokens: number;
  tokens: number;
}

/**
 * Walks `turns` newest → oldest: each pair verbatim while it fits (and the cap allows), then, from
 * the first that does not, each pair as its summary while it has one and it fits, then stops. The
 * memory message's framing and header (`memoryOpening`) are charged with the first summary, or up
 * front with `fixedMemory` (the session summary's section). With `reserve`, a pair is kept verbatim
 * only when the summaries of the older pairs (the run of pairs that have one) still fit after it.
 */
function walk(
  turns: readonly MemoryTurn[],
  budget: number,
  perMessage: number,
  maxPairs: number,
  summaries: boolean,
  memoryOpening: number,
  fixedMemory: number,
  reserve: boolean,
): Walk {
  // older[i]: tokens of the summaries of the pairs just older than i, down to the first without one.
  const older: number[] = [0];
  for (let i = 1; i <= turns.length; i++) {
    const cost = turns[i - 1].summaryTokens;
    older.push(cost === undefined ? 0 : cost + older[i - 1]);
  }
  let memoryTokens = fixedMemory > 0 ? memoryOpening + fixedMemory : 0;
  let tokens = memoryTokens;
  let i = turns.length - 1;
  let verbatim = 0;
  while (i >= 0 && verbatim < maxPairs) {
    const cost = turns[i].questionTokens + turns[i].answerTokens + 2 * perMessage;
    const held = reserve && summaries && older[i] > 0 ? older[i] + (memoryTokens === 0 ? memoryOpening : 0) : 0;
    if (tokens + cost + held > budget) break;
    tokens += cost;
    verbatim += 1;
    i -= 1;
  }
  let summarised = 0;
  while (summaries && i >= 0 && turns[i].summaryTokens !== undefined) {
    const cost = (turns[i].summaryTokens as number) + (memoryTokens === 0 ? memoryOpening : 0);
    if (tokens + cost > budget) break;
    tokens += cost;
    memoryTokens += cost;
    summarised += 1;
    i -= 1;
  }
  return { verbatim, summarised, memoryTokens, tokens };
}

/**
 * The tail plan: with summaries, first the walk that holds room for every older summary; it stands
 * when it represents every pair and still sends one pair verbatim (or the greedy walk sends none).
 * Otherwise the greedy walk (verbatim while it fits, then summaries).
 */
function planTail(
  turns: readonly MemoryTurn[],
  budget: number,
  perMessage: number,
  maxPairs: number,
  summaries: boolean,
  opening: number,
  fixed: number,
): Walk {
  const greedy = walk(turns, budget, perMessage, maxPairs, summaries, opening, fixed, false);
  if (!summaries || greedy.verbatim + greedy.summarised === turns.length) return greedy;
  const held = walk(turns, budget, perMessage, maxPairs, summaries, opening, fixed, true);
  const all = held.verbatim + held.summarised === turns.length;
  return all && (held.verbatim > 0 || greedy.verbatim === 0) ? held : greedy;
}

/**
 * Plans the history part of a prompt with conversation memory:
 *
 * 1. Newest → oldest, each pair verbatim while it fits (whole pairs, capped by `maxPairs`), holding
 *    room for the summaries of all older pairs, so that every question stays represented; when
 *    that cannot represent every pair with at least the newest pair verbatim, verbatim simply while
 *    it fits (seed 000's walk).
 * 2. From the first pair not sent verbatim, each older pair as its stored summary while it has one
 *    and it fits (`per-turn` and `compaction`); the first pair without a summary, or whose summary
 *    does not fit, ends the walk and every older pair is dropped.
 * 3. `compaction` only: when step 2 still drops pairs and a session summary is stored (covering a
 *    pair of this history), the session summary rides first and stands for every pair up to its
 *    `coversUpTo`; the pairs after it are walked as in steps 1–2 in the budget that is left. When
 *    the session summary alone does not fit, or it would leave no pair verbatim where step 2 keeps
 *    one, the plan of step 2 stands.
 *
 * `off` is seed 000 trimming (`trimHistory`): verbatim pairs, the rest dropped. Summaries are
 * counted against `budget` like pairs; the system prompt is not part of this plan (never summarised).
 * Guarantees `tokens ≤ max(budget, 0)`. Pure: never mutates its input.
 *
 * Example (tokens, perMessage 0, header 5): 18 pairs of 100 with summaries of 5, budget 699 →
 * t13…t18 verbatim (600), t1…t12 summarised (5 + 60), 665 in all.
 */
export function planMemory(input: MemoryPlanInput): MemoryPlan {
  const { history, budget, mode } = input;
  const perMessage = input.perMessageTokens ?? 0;
  const maxPairs = input.maxPairs ?? Infinity;
  const opening = perMessage + (input.headerTokens ?? 0);
  const ids = history.map((t) => t.id);
  const summaries = mode !== 'off';

  const plain = planTail(history, budget, perMessage, maxPairs, summaries, opening, 0);
  const plainDropped = history.length - plain.verbatim - plain.summarised;
  const covered = mode === 'compaction' && input.sessionSummary ? ids.indexOf(input.sessionSummary.coversUpTo) : -1;
  if (plainDropped > 0 && covered >= 0 && input.sessionSummary) {
    const session = input.sessionSummary.tokens;
    if (opening + session <= budget) {
      const rest = history.slice(covered + 1);
      const w = planTail(rest, budget, perMessage, maxPairs, true, opening, session);
      // The newest pair stays verbatim: a session summary that would push it out is not worth it.
      if (w.verbatim === 0 && plain.verbatim > 0) return fromWalk(mode, ids, plain);
      const firstSent = rest.length - w.verbatim - w.summarised;
      return {
        mode,
        verbatimTurnIds: rest.slice(rest.length - w.verbatim).map((t) => t.id),
        summarisedTurnIds: rest.slice(firstSent, rest.length - w.verbatim).map((t) => t.id),
        compactedTurnIds: ids.slice(0, covered + 1),
        droppedTurnIds: rest.slice(0, firstSent).map((t) => t.id),
        sessionSummaryTokens: session,
        memoryTokens: w.memoryTokens,
        tokens: w.tokens,
      };
    }
  }
  return fromWalk(mode, ids, plain);
}

function fromWalk(mode: MemoryMode, ids: readonly string[], plain: Walk): MemoryPlan {
  const dropped = ids.length - plain.verbatim - plain.summarised;
  return {
    mode,
    verbatimTurnIds: ids.slice(ids.length - plain.verbatim),
    summarisedTurnIds: ids.slice(dropped, ids.length - plain.verbatim),
    compactedTurnIds: [],
    droppedTurnIds: ids.slice(0, dropped),
    sessionSummaryTokens: 0,
    memoryTokens: plain.memoryTokens,
    tokens: plain.tokens,
  };
}

/** The first line of the memory message (its tokens are the planner's `headerTokens`). */
export const MEMORY_HEADER =
  'Memory of this conversation: short summaries of earlier turns that are no longer sent in full.\n\n';

/** The session summary's section of the memory message. `turns` is how many pairs it covers (1-based count). */
export function renderSessionSummary(turns: number, text: string): { head: string; text: string; tail: string } {
  return { head: `Summary of turns 1–${turns}:\n`, text: text.trim(), tail: '\n\n' };
}

/** One summarised pair's line of the memory message. `turn` is the pair's 1-based position in the session. */
export function renderSummaryLine(turn: number, text: string): { head: string; text: string; tail: string } {
  return { head: `Turn ${turn} (summary):\n`, text: text.trim(), tail: '\n\n' };
}

/** The memory message's text from its rendered parts, in order: header, session summary, summary lines oldest first. */
export function joinMemory(parts: ReadonlyArray<{ head: string; text: string; tail: string }>): string {
  return MEMORY_HEADER + parts.map((p) => p.head + p.text + p.tail).join('');
}
