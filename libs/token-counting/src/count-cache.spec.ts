import { CountCache, sharedCountCache } from './count-cache';
import { approximateCounter } from './select-token-counter';
import type { TokenCounter } from './token-counter';
import { TiktokenCounter } from './tiktoken-counter';

/** One token per character, recording every text it was asked to count. */
function recordingCounter(id = 'test:chars'): TokenCounter & { asked: string[] } {
  const asked: string[] = [];
  return {
    id,
    exact: true,
    perMessageTokens: 4,
    perRequestTokens: 3,
    asked,
    countText(text: string) {
      asked.push(text);
      return text.length;
    },
    countMessages() {
      throw new Error('not used');
    },
  };
}

describe(CountCache.name, () => {
  it('counts each text once: exact hits and misses', () => {
    const inner = recordingCounter();
    const cache = new CountCache(inner);
    expect(['alpha', 'beta', 'alpha', 'alpha', 'gamma', 'beta'].map((t) => cache.countText(t))).toEqual([
      5, 4, 5, 5, 5, 4,
    ]);
    expect(inner.asked).toEqual(['alpha', 'beta', 'gamma']);
    expect(cache.stats()).toEqual({ hits: 3, misses: 3, evictions: 0, entries: 3, codeUnits: 14 });
  });

  it('keeps the id, exactness and framing, and frames countMessages itself', () => {
    const cache = new CountCache(recordingCounter());
    expect([cache.id, cache.exact, cache.perMessageTokens, cache.perRequestTokens]).toEqual(['test:chars', true, 4, 3]);
    expect(
      cache.countMessages([
        { role: 'system', content: 'abc' },
        { role: 'user', content: 'abc' },
      ]),
    ).toBe(3 + (3 + 4) * 2);
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1 });
  });

  it('evicts the least recently used text past maxEntries', () => {
    const inner = recordingCounter();
    const cache = new CountCache(inner, { maxEntries: 2 });
    cache.countText('a');
    cache.countText('b');
    cache.countText('a'); // a is now the most recent
    cache.countText('c'); // evicts b
    expect(cache.stats()).toEqual({ hits: 1, misses: 3, evictions: 1, entries: 2, codeUnits: 2 });
    inner.asked.length = 0;
    cache.countText('a');
    cache.countText('b');
    expect(inner.asked).toEqual(['b']);
  });

  it('stays within maxCodeUnits and never keeps a text longer than maxTextLength', () => {
    const inner = recordingCounter();
    const cache = new CountCache(inner, { maxCodeUnits: 10, maxTextLength: 6 });
    for (const text of ['aaaa', 'bbbb', 'cccc']) cache.countText(text);
    expect(cache.stats()).toEqual({ hits: 0, misses: 3, evictions: 1, entries: 2, codeUnits: 8 });
    const long = 'x'.repeat(7);
    expect([cache.countText(long), cache.countText(long)]).toEqual([7, 7]);
    expect(inner.asked.filter((t) => t === long)).toHaveLength(2);
    expect(cache.stats()).toMatchObject({ entries: 2, codeUnits: 8 });
  });

  it('gives the counts of the counter it caches (o200k_base)', () => {
    const o200k = new TiktokenCounter('o200k_base');
    const cache = new CountCache(new TiktokenCounter('o200k_base'));
    const texts = [
      'How do I create an index concurrently?',
      'CREATE INDEX CONCURRENTLY idx ON t (c);',
      '日本語の文章。',
    ];
    for (const text of [...texts, ...texts]) expect(cache.countText(text)).toBe(o200k.countText(text));
    expect(cache.stats()).toMatchObject({ hits: 3, misses: 3 });
  });

  describe(sharedCountCache.name, () => {
    it('is one cache per counter id per process', () => {
      const first = sharedCountCache(new TiktokenCounter('o200k_base'));
      expect(first).toBeInstanceOf(CountCache);
      expect(sharedCountCache(new TiktokenCounter('o200k_base'))).toBe(first);
      expect(sharedCountCache(new TiktokenCounter('cl100k_base'))).not.toBe(first);
    });

    it('never caches a counter that is not exact (the calibrated estimate moves under one id)', () => {
      const estimate = approximateCounter();
      expect(sharedCountCache(estimate)).toBe(estimate);
    });
  });
});
