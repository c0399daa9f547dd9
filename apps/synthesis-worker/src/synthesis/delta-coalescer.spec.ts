import { type CoalescerTimers, DeltaCoalescer } from './delta-coalescer';

/** A manual clock: timers fire only when the test advances time. */
class ManualTimers implements CoalescerTimers {
  now = 0;
  private pending: Array<{ at: number; fn: () => void; handle: number }> = [];
  private next = 0;
  setTimeout(fn: () => void, ms: number): unknown {
    const handle = ++this.next;
    this.pending.push({ at: this.now + ms, fn, handle });
    return handle;
  }
  clearTimeout(handle: unknown): void {
    this.pending = this.pending.filter((t) => t.handle !== handle);
  }
  /** Moves the clock `ms` ahead, firing each due timer at its own time, in time order. */
  async advance(ms: number): Promise<void> {
    const target = this.now + ms;
    for (;;) {
      const next = this.pending.filter((t) => t.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.pending = this.pending.filter((t) => t !== next);
      this.now = next.at;
      next.fn();
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.now = target;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function setup(maxCharacters = 1_024) {
  const timers = new ManualTimers();
  const published: Array<{ at: number; text: string }> = [];
  const coalescer = new DeltaCoalescer(
    async (text) => void published.push({ at: timers.now, text }),
    timers,
    25,
    maxCharacters,
  );
  return { timers, published, coalescer };
}

describe(DeltaCoalescer.name, () => {
  describe('push', () => {
    it('publishes the first chunk at once, without waiting for the interval', async () => {
      const { published, coalescer } = setup();
      await coalescer.push('Hello');
      expect(published).toEqual([{ at: 0, text: 'Hello' }]);
    });

    it('holds later chunks until 25 ms after the first one held, then publishes them as one delta', async () => {
      const { timers, published, coalescer } = setup();
      await coalescer.push('A');
      for (const [ms, text] of [
        [5, 'b'],
        [5, 'c'],
        [5, 'd'],
      ] as const) {
        await timers.advance(ms);
        await coalescer.push(text);
      }
      expect(published.map((p) => p.text)).toEqual(['A']);
      await timers.advance(14); // 29 ms: 24 ms after 'b' was held
      expect(published.map((p) => p.text)).toEqual(['A']);
      await timers.advance(1);
      expect(published).toEqual([
        { at: 0, text: 'A' },
        { at: 30, text: 'bcd' },
      ]);
    });

    it('gives 1,000 one-token chunks arriving 1 ms apart 41 deltas instead of 1,000', async () => {
      const { timers, published, coalescer } = setup();
      for (let i = 0; i < 1000; i++) {
        await coalescer.push(`t${i} `);
        await timers.advance(1);
      }
      await coalescer.flush();
      expect(published).toHaveLength(41);
      expect(published.map((p) => p.text).join('')).toBe(Array.from({ length: 1000 }, (_, i) => `t${i} `).join(''));
    });

    it.each([
      // [chunk arrival times (ms), the deltas' boundaries as published (time: chunk indexes)]
      [
        [0, 1, 2, 3],
        ['0: 0', '26: 1-3'],
      ],
      [
        [0, 30, 31, 60],
        ['0: 0', '55: 1-2', '85: 3'],
      ],
      // a chunk arriving when the timer is due goes into the next delta
      [
        [0, 10, 34, 35, 36, 90],
        ['0: 0', '35: 1-2', '60: 3-4', '115: 5'],
      ],
      [
        [0, 100, 200],
        ['0: 0', '125: 1', '225: 2'],
      ],
    ])('cuts chunks arriving at %j into deltas %j (25 ms after the first chunk held)', async (arrivals, expected) => {
      const timers = new ManualTimers();
      const published: string[] = [];
      const coalescer = new DeltaCoalescer(async (text) => void published.push(`${timers.now}: ${text}`), timers, 25);
      const label = (i: number) => `[${i}]`;
      for (let i = 0; i < arrivals.length; i++) {
        await timers.advance(arrivals[i] - timers.now);
        await coalescer.push(label(i));
      }
      await timers.advance(200);
      await coalescer.flush();
      const boundaries = published.map((p) => {
        const [at, text] = p.split(': ');
        const indexes = [...text.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1]));
        return `${at}: ${indexes.length === 1 ? indexes[0] : `${indexes[0]}-${indexes[indexes.length - 1]}`}`;
      });
      expect(boundaries).toEqual(expected);
    });

    it('publishes every chunk as its own delta, at once, when the interval is 0 (coalescing off)', async () => {
      const timers = new ManualTimers();
      const published: string[] = [];
      const coalescer = new DeltaCoalescer(async (text) => void published.push(text), timers, 0);
      for (const text of ['a', 'b', 'c']) await coalescer.push(text);
      expect(published).toEqual(['a', 'b', 'c']);
      await coalescer.flush();
      expect(published).toEqual(['a', 'b', 'c']);
    });

    it('publishes at once when the held text reaches the character cap', async () => {
      const { published, coalescer } = setup(10);
      await coalescer.push('first');
      await coalescer.push('12345');
      await coalescer.push('67890');
      expect(published.map((p) => p.text)).toEqual(['first', '1234567890']);
    });

    it('throws a failed publish at the next push, and publishes nothing after it', async () => {
      const timers = new ManualTimers();
      const published: string[] = [];
      let calls = 0;
      const coalescer = new DeltaCoalescer(async (text) => {
        if (++calls === 2) throw new Error('fenced');
        published.push(text);
      }, timers);
      await coalescer.push('one');
      await coalescer.push('two');
      await timers.advance(25);
      await expect(coalescer.push('three')).rejects.toThrow('fenced');
      await expect(coalescer.flush()).rejects.toThrow('fenced');
      expect(published).toEqual(['one']);
    });
  });

  describe('flush', () => {
    it('publishes what is held before the interval ends, so done follows the whole text', async () => {
      const { published, coalescer } = setup();
      await coalescer.push('a');
      await coalescer.push('b');
      await coalescer.push('c');
      await coalescer.flush();
      expect(published.map((p) => p.text)).toEqual(['a', 'bc']);
      await coalescer.flush();
      expect(published).toHaveLength(2);
    });
  });

  describe('discard', () => {
    it('drops held text and its timer', async () => {
      const { timers, published, coalescer } = setup();
      await coalescer.push('a');
      await coalescer.push('b');
      coalescer.discard();
      await timers.advance(100);
      expect(published.map((p) => p.text)).toEqual(['a']);
    });
  });
});
