import type { AskEvent } from '@ask/ask-contracts';
import { applyEvent, type AskOutcome } from './ask-client';

describe('applyEvent', () => {
  const fresh = (): AskOutcome => ({ askId: 'a', sessionId: 's', answer: '', events: [] });
  const ev = (type: AskEvent['type'], data: unknown): AskEvent => ({ id: '1-0', type, data }) as AskEvent;

  it('appends deltas in order', () => {
    const o = fresh();
    applyEvent(o, ev('delta', { text: 'Hello ' }));
    applyEvent(o, ev('delta', { text: 'world' }));
    expect(o.answer).toBe('Hello world');
  });

  it('discards the text streamed before a reset', () => {
    const o = fresh();
    applyEvent(o, ev('delta', { text: 'half an ans' }));
    applyEvent(o, ev('reset', { attempt: 2, reason: 'restart' }));
    applyEvent(o, ev('delta', { text: 'The answer.' }));
    expect(o.answer).toBe('The answer.');
  });

  it('keeps the terminal error', () => {
    const o = fresh();
    applyEvent(o, ev('error', { status: 413, code: 'context_overflow', error: 'x' }));
    expect(o.error?.code).toBe('context_overflow');
  });
});
