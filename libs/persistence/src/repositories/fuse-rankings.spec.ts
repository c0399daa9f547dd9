import type { RetrievedItem } from '@ask/ask-contracts';
import { fuseRankings, RRF_K } from './fuse-rankings';

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
    expect(fused[0].legs).toEqual({ vector: { rank: 1, score: 0.9 }, fused: 1 / (RRF_K + 1) });
  });

  it('keeps the full-text order when the vector leg is empty', () => {
    const fused = fuseRankings([], [item('x', 0.1, 2.5), item('y', 0.4, 1.5)], { vector: 1, fulltext: 1 }, 10);
    expect(fused.map((i) => [i.id, i.legs])).toEqual([
      ['x', { fulltext: { rank: 1, score: 2.5 }, fused: 1 / 61 }],
      ['y', { fulltext: { rank: 2, score: 1.5 }, fused: 1 / 62 }],
    ]);
  });

  it('lifts an item both legs found above items only one leg found', () => {
    const fused = fuseRankings(vector, [item('c', 0.7, 3), item('z', 0.2, 1)], { vector: 1, fulltext: 1 }, 10);
    expect(fused.map((i) => i.id)).toEqual(['c', 'a', 'b', 'z']); // b and z tie at 1/62: the higher cosine first
    expect(fused[0].legs).toEqual({
      vector: { rank: 3, score: 0.7 },
      fulltext: { rank: 1, score: 3 },
      fused: 1 / 63 + 1 / 61,
    });
  });

  it('weights the legs: a zero full-text weight gives the vector order back, then full-text-only items', () => {
    const fused = fuseRankings(vector, [item('c', 0.7, 3), item('z', 0.2, 1)], { vector: 1, fulltext: 0 }, 10);
    expect(fused.map((i) => i.id)).toEqual(['a', 'b', 'c', 'z']);
  });

  it('cuts to top-K', () => {
    expect(fuseRankings(vector, [item('z', 0.2, 1)], { vector: 1, fulltext: 1 }, 2).map((i) => i.id)).toEqual([
      'a',
      'z',
    ]);
  });
});
