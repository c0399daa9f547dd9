import type { BudgetEvent } from '@ask/ask-contracts';
import { AskErrorCode, DASHBOARD_COPY } from '@ask/ask-errors';
import {
  badgeText,
  budgetSummary,
  errorCopy,
  memoryLine,
  relevanceLine,
  STREAM_LOST_CODE,
  STREAM_LOST_COPY,
  usd,
} from './copy';

const budget = (over: Partial<BudgetEvent>) =>
  ({
    model: 'local',
    window: 8192,
    used: 1234,
    available: 5134,
    turnsKept: 2,
    turnsDropped: 0,
    contextKept: 6,
    contextDropped: 0,
    ...over,
  }) as BudgetEvent;

describe('errorCopy', () => {
  it.each([
    [
      'llm_not_configured',
      'This project has no LLM provider configured. Add one under project settings → LLM to enable Ask.',
    ],
    [
      'embedding_not_configured',
      'This project has no embedding provider configured. Add one under project settings → Embedding to enable Ask.',
    ],
    [
      'context_overflow',
      "This conversation has grown past the model's context window. Start a new chat, or switch to a model with a wider context window.",
    ],
    [
      'llm_upstream',
      'The LLM provider rejected the request. Try again; if it keeps happening, check provider credentials and quota.',
    ],
  ])('shows seed 000 copy for %s', (code, copy) => {
    expect(errorCopy({ code })).toBe(copy);
  });

  it('chooses by code for every code of the API (the copy is @ask/ask-errors itself)', () => {
    for (const code of Object.values(AskErrorCode)) expect(errorCopy({ code })).toBe(DASHBOARD_COPY[code]);
  });

  it('falls back to the catch-all copy for a code it does not know', () => {
    expect(errorCopy({ code: 'something_new' })).toBe(DASHBOARD_COPY[AskErrorCode.InternalError]);
  });

  it('has its own copy for a stream the browser gave up on', () => {
    expect(errorCopy({ code: STREAM_LOST_CODE })).toBe(STREAM_LOST_COPY);
  });
});

describe('badgeText', () => {
  it('is "used / window" with thousands separators', () => {
    expect(badgeText(budget({}))).toBe('1,234 / 8,192');
  });
});

describe('budgetSummary', () => {
  it('says what was carried and nothing about drops when nothing was dropped', () => {
    expect(budgetSummary(budget({}))).toEqual({
      kept: 'Prompt 1,234 of 8,192 tokens (local); carried 2 earlier turns and 6 context items.',
      dropped: null,
    });
  });

  it('names dropped turns and context items plainly', () => {
    expect(budgetSummary(budget({ turnsDropped: 3, contextDropped: 1 })).dropped).toBe(
      'Dropped to fit the context window: 3 earlier turns and 1 context item.',
    );
  });
});

describe(memoryLine.name, () => {
  const memory = (over: Partial<NonNullable<BudgetEvent['memory']>>): NonNullable<BudgetEvent['memory']> => ({
    mode: 'per-turn',
    verbatimPairs: 0,
    summarisedPairs: 0,
    compactedPairs: 0,
    droppedPairs: 0,
    verbatim: [],
    summarised: [],
    compacted: [],
    dropped: [],
    sessionSummary: false,
    sessionSummaryTokens: 0,
    memoryTokens: 0,
    ...over,
  });

  it('says which turns were summarised and which rode verbatim', () => {
    expect(
      memoryLine(
        budget({
          memory: memory({ verbatimPairs: 6, summarisedPairs: 12, verbatim: [[13, 18]], summarised: [[1, 12]] }),
        }),
      ),
    ).toBe('Memory: turns 1–12 summarised, 13–18 verbatim.');
  });

  it('marks where compaction happened and what was dropped', () => {
    const m = memory({
      mode: 'compaction',
      compactedPairs: 10,
      droppedPairs: 2,
      summarisedPairs: 3,
      verbatimPairs: 2,
      compacted: [[1, 10]],
      dropped: [[11, 12]],
      summarised: [[13, 15]],
      verbatim: [[16, 17]],
      sessionSummary: true,
      sessionSummaryTokens: 1234,
    });
    expect(memoryLine(budget({ memory: m }))).toBe(
      'Memory: turns 1–10 compacted into the session summary (1,234 tokens), 11–12 dropped, 13–15 summarised, 16–17 verbatim.',
    );
  });

  it('is null for a first turn and for events written before memory', () => {
    expect(memoryLine(budget({ memory: memory({}) }))).toBeNull();
    expect(memoryLine(budget({}))).toBeNull();
  });
});

describe('usd', () => {
  it.each([
    ['0.002161250000', '$0.002161'],
    ['0.002161500000', '$0.002162'],
    ['0.000000499999', '$0.00'],
    ['0.000000500000', '$0.000001'],
    ['1.500000000000', '$1.50'],
    ['0.000000000000', '$0.00'],
    ['12345.999999500000', '$12,346.00'],
    ['3', '$3.00'],
  ])('reads %s as %s (half up at 6 places, integer arithmetic)', (value, text) => {
    expect(usd(value)).toBe(text);
  });
});

describe(relevanceLine.name, () => {
  const item = (
    id: string,
    score: number,
    kept: boolean,
    reason: NonNullable<BudgetEvent['items']>[number]['reason'],
  ) => ({
    id,
    kind: 'knowledge',
    score,
    tokens: 315,
    kept,
    reason,
  });

  it("names the items left out below the floor, with the best one's score (issue 32 turn 31)", () => {
    const items = [0.14, 0.13, 0.12, 0.11, 0.1, 0.09, 0.08, 0.07].map((s, i) => item(`k${i}`, s, false, 'below-floor'));
    expect(relevanceLine(budget({ items, relevanceFloor: 0.175 }))).toBe(
      'Left out for relevance: 8 context items below the floor 0.175 (best 0.14).',
    );
  });

  it('says how many below the floor still rode in spare room', () => {
    const items = [
      item('k1', 0.5, true, 'floor'),
      item('k2', 0.1, true, 'spare-room'),
      item('k3', 0.05, false, 'excluded'),
    ];
    expect(relevanceLine(budget({ items, relevanceFloor: 0.2 }))).toBe(
      'Left out for relevance: 1 context item below the floor 0.2 (best 0.05). 1 context item below the floor 0.2 sent in room memory did not need.',
    );
  });

  it('is null without a floor, with every item relevant, and for events written before decisions', () => {
    expect(relevanceLine(budget({ items: [item('k1', 0.1, true, 'fits')], relevanceFloor: null }))).toBeNull();
    expect(relevanceLine(budget({ items: [item('k1', 0.5, true, 'floor')], relevanceFloor: 0.2 }))).toBeNull();
    expect(relevanceLine(budget({}))).toBeNull();
  });
});
