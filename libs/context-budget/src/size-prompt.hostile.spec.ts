import type { RetrievedItem } from '@ask/ask-contracts';
import { isAskError } from '@ask/ask-errors';
import { resolveModel } from '@ask/model-catalog';
import { countOnce, tiktokenCounter } from '@ask/token-counting';
import { sizePrompt } from './size-prompt';

/**
 * Hostile system prompts and questions (issue 10: 8,000 × 规 as a system prompt froze the shared
 * synthesis worker ~98 s per ask) through the sizer the synthesis worker runs, with the counter it
 * runs (`countOnce` over tiktoken o200k_base for the local stand-in): each gets a typed 413 or a
 * counted plan, every text is counted once however often the turn is re-planned, and the counting work
 * is bounded by the bytes counted (never a time: bench/hostile has the event-loop delays).
 */
describe(`${sizePrompt.name} on hostile texts`, () => {
  const o200k = tiktokenCounter('o200k_base');
  const model = resolveModel({ provider: 'local', model: 'local' });
  const items: RetrievedItem[] = [
    { id: 'k1', kind: 'knowledge', title: 'Doc', text: 'Vectors are indexed with HNSW.', score: 0.9 },
  ];
  const base = { model, exact: true, maxTokens: 2048, history: [], items };

  const sizeTwice = (systemPrompt: string, question: string) => {
    const counter = countOnce(o200k);
    const before = o200k.work();
    let outcome: { used: number } | { code: string; status: number };
    try {
      sizePrompt({ ...base, counter, systemPrompt, question });
      // A re-plan after a provider's overflow (a lower window) counts nothing again.
      outcome = { used: sizePrompt({ ...base, counter, systemPrompt, question, windowOverride: 7_000 }).plan.used };
    } catch (err) {
      if (!isAskError(err)) throw err;
      outcome = { code: err.code, status: err.status };
    }
    const after = o200k.work();
    return {
      outcome,
      texts: after.texts - before.texts,
      bytes: after.bytes - before.bytes,
      pretokens: after.pretokens - before.pretokens,
      merges: after.merges - before.merges,
      rankLookups: after.rankLookups - before.rankLookups,
    };
  };

  it.each([
    {
      name: 'system prompt 8,000 × 规 (8,000 tokens in an 8,192 window): 413',
      systemPrompt: '规'.repeat(8_000),
      question: 'What is HNSW?',
      expected: { code: 'context_overflow', status: 413 },
    },
    {
      name: 'system prompt 4,000 × 🧪 (8,000 UTF-16 units, 12,000 tokens): 413',
      systemPrompt: '🧪'.repeat(4_000),
      question: 'What is HNSW?',
      expected: { code: 'context_overflow', status: 413 },
    },
    {
      name: 'system prompt "a" × 8,000 (1,000 tokens): a plan of 1,038 tokens',
      systemPrompt: 'a'.repeat(8_000),
      question: 'What is HNSW?',
      expected: { used: 1_038 },
    },
    {
      name: 'question "a" × 8,000: a plan of 1,036 tokens',
      systemPrompt: 'Answer from context.',
      question: 'a'.repeat(8_000),
      expected: { used: 1_036 },
    },
  ])('$name; each text counted once, work bounded by its bytes', ({ systemPrompt, question, expected }) => {
    const done = sizeTwice(systemPrompt, question);
    expect(done.outcome).toEqual(expected);
    // The question, the system prompt, the item's text and its rendered header: at most 4 texts, once each.
    expect(done.texts).toBeLessThanOrEqual(4);
    expect(done.bytes).toBeLessThanOrEqual(Buffer.byteLength(systemPrompt + question, 'utf8') + 200);
    expect(done.merges).toBeLessThanOrEqual(done.bytes - done.pretokens);
    expect(done.rankLookups).toBeLessThanOrEqual(done.pretokens + 3 * done.bytes);
  });
});
