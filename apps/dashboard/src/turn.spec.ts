import type { BudgetEvent } from '@ask/ask-contracts';
import { applyEvent, failTurn, newTurn, storedTurn } from './turn';

const budget = {
  window: 8192,
  used: 1200,
  turnsKept: 1,
  turnsDropped: 0,
  contextKept: 6,
  contextDropped: 0,
} as BudgetEvent;

describe('applyEvent', () => {
  it('concatenates the deltas in order', () => {
    const turn = newTurn('q');
    applyEvent(turn, '1-0', 'accepted', { askId: 'a', sessionId: 's' });
    applyEvent(turn, '2-0', 'delta', { text: 'PostgreSQL ' });
    applyEvent(turn, '3-0', 'delta', { text: 'provides' });
    expect(turn.answer).toBe('PostgreSQL provides');
    expect(turn.status).toBe('streaming');
  });

  it('ignores an event whose id was already applied, so no word repeats', () => {
    const turn = newTurn('q');
    expect(applyEvent(turn, '2-0', 'delta', { text: 'one ' })).toBe(true);
    expect(applyEvent(turn, '2-0', 'delta', { text: 'one ' })).toBe(false);
    applyEvent(turn, '3-0', 'delta', { text: 'two' });
    expect(turn.answer).toBe('one two');
  });

  it('discards the text so far on reset; the next deltas restart the answer', () => {
    const turn = newTurn('q');
    applyEvent(turn, '2-0', 'delta', { text: 'half an ans' });
    applyEvent(turn, '3-0', 'reset', { attempt: 2, reason: 'worker restarted' });
    applyEvent(turn, '4-0', 'delta', { text: 'the answer' });
    expect(turn.answer).toBe('the answer');
  });

  it('keeps the latest budget (a second one follows a re-plan)', () => {
    const turn = newTurn('q');
    applyEvent(turn, '1-0', 'budget', budget);
    applyEvent(turn, '2-0', 'budget', { ...budget, window: 4096 });
    expect(turn.budget?.window).toBe(4096);
  });

  it('takes the sources from done and ignores anything after a terminal event', () => {
    const turn = newTurn('q');
    applyEvent(turn, '1-0', 'delta', { text: 'a' });
    const sources = [{ kind: 'knowledge', id: 'k1', title: 'README', source: 'README.md' }];
    applyEvent(turn, '2-0', 'done', { messageId: 'm', usage: { promptTokens: 1, completionTokens: 1 }, sources });
    expect(applyEvent(turn, '3-0', 'delta', { text: 'b' })).toBe(false);
    expect([turn.status, turn.answer, turn.sources]).toEqual(['done', 'a', sources]);
  });

  it('lists a page once, at its best chunk, when done names it by several chunks', () => {
    const turn = newTurn('q');
    const chunk = (id: string, source: string, title: string) => ({ kind: 'knowledge', id, title, source });
    applyEvent(turn, '1-0', 'done', {
      messageId: 'm',
      usage: { promptTokens: 1, completionTokens: 1 },
      sources: [
        chunk('k7', 'manual/sql-select.html', 'SELECT'),
        chunk('k3', 'manual/sql-select.html', 'SELECT'),
        { kind: 'insight', id: 'i1', title: 'Prefer keyset pagination' },
        chunk('k9', 'manual/queries-limit.html', 'LIMIT and OFFSET'),
        chunk('k1', 'manual/sql-select.html', 'SELECT'),
      ],
    });
    expect(turn.sources.map((s) => s.id)).toEqual(['k7', 'i1', 'k9']);
  });

  it('keeps the typed error of an error event', () => {
    const turn = newTurn('q');
    const error = { status: 413, code: 'context_overflow', error: 'too long', details: 'model=local window=8192' };
    applyEvent(turn, '1-0', 'error', error);
    expect([turn.status, turn.error]).toEqual(['error', error]);
  });
});

describe('storedTurn', () => {
  it('lists the sources of an answer stored once per chunk one per page', () => {
    const sources = [
      { kind: 'knowledge', id: 'k2', title: 'VACUUM', source: 'manual/sql-vacuum.html' },
      { kind: 'knowledge', id: 'k5', title: 'VACUUM', source: 'manual/sql-vacuum.html' },
      { kind: 'knowledge', id: 'k4', title: 'Routine Vacuuming', source: 'manual/routine-vacuuming.html' },
    ];
    expect(storedTurn('q', 'a', 'ask-1', null, sources).sources).toEqual([sources[0], sources[2]]);
  });

  it('is a finished turn with its stored answer', () => {
    expect(storedTurn('q', 'a', 'ask-1')).toMatchObject({
      question: 'q',
      answer: 'a',
      askId: 'ask-1',
      status: 'done',
      budget: null,
      sources: [],
    });
  });

  it('carries the budget and sources stored with the answer', () => {
    const budget = {
      provider: 'local',
      model: 'local',
      window: 8192,
      maxTokens: 2048,
      reserve: 64,
      margin: 410,
      counter: 'exact',
      counterId: 'x',
      calibration: 1,
      available: 5670,
      used: 1234,
      turnsKept: 1,
      turnsDropped: 2,
      contextKept: 1,
      contextDropped: 0,
      keptTurnIds: [] as string[],
    } satisfies BudgetEvent;
    const sources = [{ kind: 'knowledge', id: 'k1', title: 'HNSW' }];
    expect(storedTurn('q', 'a', 'ask-1', budget, sources)).toMatchObject({ budget, sources });
  });
});

describe('failTurn', () => {
  it('ends the turn with the given error', () => {
    const turn = newTurn('q');
    failTurn(turn, { status: 412, code: 'llm_not_configured', error: 'x' });
    expect(turn.status).toBe('error');
  });
});
