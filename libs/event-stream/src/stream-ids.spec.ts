import { compareStreamIds } from './stream-ids';

/** An independent reference: both parts as BigInt (what compareStreamIds computed before issue 19). */
function reference(a: string, b: string): number {
  const [am, as = 0n] = a.split('-').map(BigInt);
  const [bm, bs = 0n] = b.split('-').map(BigInt);
  if (am !== bm) return am < bm ? -1 : 1;
  return as === bs ? 0 : as < bs ? -1 : 1;
}

const MAX = '18446744073709551615';
/** Ids around every boundary: 0, leading zeros, lengths, the 2^64 − 1 maximum, the missing sequence. */
const IDS = [
  '0',
  '0-0',
  '00-000',
  '0-1',
  '1-0',
  '1',
  '01-0',
  '9-9',
  '10-0',
  '10-10',
  '99-100',
  '100-99',
  '1718000000000-0',
  '1718000000000-1',
  '1718000000000-10',
  '1718000000001-0',
  '0001718000000001-0',
  '999999999999-999',
  '1000000000000-0',
  `${MAX}-0`,
  `${MAX}-${MAX}`,
  `1-${MAX}`,
  '18446744073709551614-18446744073709551615',
];

describe('compareStreamIds', () => {
  it('orders every pair of boundary ids as BigInt does', () => {
    const ours: string[] = [];
    const theirs: string[] = [];
    for (const a of IDS) {
      for (const b of IDS) {
        ours.push(`${a} ${b} ${compareStreamIds(a, b)}`);
        theirs.push(`${a} ${b} ${reference(a, b)}`);
      }
    }
    expect(ours).toEqual(theirs);
  });

  it('orders 5,000 random pairs of ids as BigInt does', () => {
    // A fixed linear congruential sequence: the same pairs on every run.
    let seed = 19;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    const part = () => {
      const digits = 1 + next(20);
      let text = '';
      for (let i = 0; i < digits; i += 1) text += String(next(10));
      return BigInt(text) > BigInt(MAX) ? MAX : text;
    };
    const mismatches: string[] = [];
    for (let i = 0; i < 5_000; i += 1) {
      const a = `${part()}-${part()}`;
      const b = next(3) === 0 ? `${a.split('-')[0]}-${part()}` : `${part()}-${part()}`;
      if (compareStreamIds(a, b) !== reference(a, b)) mismatches.push(`${a} ${b}`);
    }
    expect(mismatches).toEqual([]);
  });

  it('sorts ids as Redis orders its entries', () => {
    const sorted = ['1718000000001-0', '999-5', '1718000000000-10', '0', '1718000000000-2'].sort(compareStreamIds);
    expect(sorted).toEqual(['0', '999-5', '1718000000000-2', '1718000000000-10', '1718000000001-0']);
  });
});
