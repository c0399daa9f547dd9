import { assembleMessages } from './assemble';
import { APPROXIMATE_MARGIN_PERCENT, computeBudget, EXACT_MARGIN_PERCENT } from './budget';
import type { SizableTurn, SizedPrompt, SizingInput } from './size-prompt';

/**
 * The bare request of a turn: the system prompt and the question alone, with `max_tokens` (no
 * retrieved item, no earlier pair, no memory), for when the plan with the approximate counter found
 * no room even for the question with one item. Our count of it may be far over
 * the provider's (an uncalibrated estimate meant never to be low: Thai ≈ 4× a real tokenizer), so it
 * is sent anyway and the provider's answer decides: it fits, or its overflow error discloses the real
 * size. The plan's figures are the budget's (`computeBudget`) with `used` our count of the bare
 * request, which may exceed `available`: every history pair is dropped, every item too.
 *
 * @throws RangeError on a budget RangeError (see `computeBudget`), or a blank question.
 */
export function sizeBareRequest<T extends SizableTurn>(
  input: Pick<
    SizingInput<T>,
    | 'model'
    | 'counter'
    | 'exact'
    | 'scale'
    | 'maxTokens'
    | 'systemPrompt'
    | 'question'
    | 'history'
    | 'items'
    | 'windowOverride'
  >,
): SizedPrompt<T> {
  const factor = input.scale !== undefined && input.scale > 1 ? input.scale : 1;
  const scale = (n: number) => (factor > 1 ? Math.ceil(n * factor) : n);
  const window = input.windowOverride ?? input.model.window;
  const budget = computeBudget({ window, maxTokens: input.maxTokens, exact: input.exact });
  const { counter } = input;
  const questionTokens = scale(counter.countText(input.question));
  const used =
    scale(counter.countText(input.systemPrompt)) +
    questionTokens +
    2 * counter.perMessageTokens +
    counter.perRequestTokens;
  const dropped = input.history.map((h) => h.message.id);
  return {
    plan: {
      ...budget,
      historyBudget: 0,
      used,
      keptTurnIds: [],
      turnsKept: 0,
      turnsDropped: dropped.length,
      turnsSummarised: 0,
      turnsCompacted: 0,
      memory: {
        mode: 'off',
        verbatimTurnIds: [],
        summarisedTurnIds: [],
        compactedTurnIds: [],
        droppedTurnIds: dropped,
        sessionSummaryTokens: 0,
        memoryTokens: 0,
        tokens: 0,
      },
      keptItemIds: [],
      droppedItemIds: input.items.map((item) => item.id),
      contextKept: 0,
      contextDropped: input.items.length,
      // Every item left out: the bare request carries none (its tokens as the item's text counts).
      items: input.items.map((item) => ({
        id: item.id,
        kind: item.kind,
        score: item.score,
        tokens: scale(counter.countText(item.text)),
        kept: false,
        reason: 'no-room' as const,
      })),
      relevanceFloor: null,
      memoryRoom: 0,
      // A question too large for any history says nothing about what memory should roll up.
      evictedUpTo: null,
    },
    messages: assembleMessages({
      systemPrompt: input.systemPrompt,
      contextItems: [],
      history: [],
      question: input.question,
    }),
    keptItems: [],
    keptTurns: [],
    window,
    figures: { question: questionTokens, rag: 0, knowledge: 0 },
    keptItemTexts: [],
    scale: factor,
    // The seed's margin: the bare request goes because our count cannot be trusted to fit.
    margin: input.exact
      ? { percent: EXACT_MARGIN_PERCENT, basis: 'exact' }
      : { percent: APPROXIMATE_MARGIN_PERCENT, basis: 'approximate' },
  };
}
