import type { RetrievedItem } from '@ask/ask-contracts';
import { fuseRankings, fusionDepth } from './fuse-rankings';

const item = (id: string, score: number, fulltext?: number): RetrievedItem => ({
  id,
  kind: 'knowledge',
  title: id,
  text: id,
  score,
  ...(fulltext !== undefined ? { legs: { fulltext: { rank: 0, score: fulltext } } } : {}),
});

describe('fuseRankings', () => {
  const vector = [item('a', 0.9), item('b', 0.8), item('c', 0.7)];

  it('keeps the vector order when the full-text leg abstains (found nothing)', () => {
    const fused = fuseRankings(vector, [], { vector: 1, fulltext: 1 }, 10);
    expect(fused.map((i) => i.id)).toEqual(['a', 'b', 'c']);
    // cosine min-max normalised over the candidates (0.7..0.9), text 0: (1 · 1 + 1 · 0) ÷ 2.
    expect(fused[0].legs).toEqual({ vector: { rank: 1, score: 0.9 }, fused: 0.5 });
    expect(fused[2].legs?.fused).toBe(0);
  });

  it('keeps the full-text order when the vector leg is empty and cosines agree', () => {
    const fused = fuseRankings([], [item('x', 0.4, 2.5), item('y', 0.1, 1.5)], { vector: 1, fulltext: 1 }, 10);
    expect(fused.map((i) => [i.id, i.legs])).toEqual([
      ['x', { fulltext: { rank: 1, score: 2.5 }, fused: 1 }],
      ['y', { fulltext: { rank: 2, score: 1.5 }, fused: (0 + 1.5 / 2.5) / 2 }],
    ]);
  });

  it('lifts an item both legs found above items only one leg found', () => {
    const fused = fuseRankings(vector, [item('c', 0.7, 3), item('z', 0.2, 1)], { vector: 1, fulltext: 1 }, 10);
    // cosine over 0.2..0.9: a 1, b 6/7, c 5/7, z 0; text ÷ 3: c 1, z 1/3.
    expect(fused.map((i) => i.id)).toEqual(['c', 'a', 'b', 'z']);
    expect(fused[0].legs).toEqual({
      vector: { rank: 3, score: 0.7 },
      fulltext: { rank: 1, score: 3 },
      fused: (5 / 7 + 1) / 2,
    });
  });

  it('weights the legs: a zero full-text weight gives the cosine order', () => {
    const fused = fuseRankings(vector, [item('c', 0.7, 3), item('z', 0.2, 1)], { vector: 1, fulltext: 0 }, 10);
    expect(fused.map((i) => i.id)).toEqual(['a', 'b', 'c', 'z']);
  });

  it("under 0.5 / 1 the vector leg's first item outranks weak full-text-only items (issue 33)", () => {
    // Eight full-text-only items, the first strong, the rest one match each; one vector-only item.
    const text = [item('t1', 0.3, 1), ...Array.from({ length: 7 }, (_, i) => item(`t${i + 2}`, 0.2, 0.1))];
    const fused = fuseRankings([item('v', 0.8)], text, { vector: 0.5, fulltext: 1 }, 5);
    expect(fused.map((i) => i.id)).toEqual(['t1', 'v', 't2', 't3', 't4']);
    expect(fused[1].legs?.fused).toBeCloseTo(1 / 3, 12);
  });

  it('cuts to top-K', () => {
    expect(fuseRankings(vector, [item('z', 0.2, 1)], { vector: 1, fulltext: 1 }, 2).map((i) => i.id)).toEqual([
      'a',
      'z',
    ]);
  });
});

describe('fusionDepth', () => {
  it('is 3 × top-K, at least 30, at most 200', () => {
    expect([1, 8, 10, 20, 100, 200].map(fusionDepth)).toEqual([30, 30, 30, 60, 200, 200]);
  });
});
