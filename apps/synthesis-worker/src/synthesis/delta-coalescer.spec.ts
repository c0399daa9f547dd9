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
  async advance(ms: number): Promise<void> {
    this.now += ms;
    const due = this.pending.filter((t) => t.at <= this.now);
    this.pending = this.pending.filter((t) => t.at > this.now);
    for (const t of due) t.fn();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function setup(maxCharacters = 1_024) {
  const timers = new ManualTimers();
  const published: Array<{ at: number; text: string }> = [];
  const coalescer = new DeltaCoalescer(async (text) => void published.push({ at: timers.now, text }), timers, 25, maxCharacters);
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
      for (const [ms, text] of [[5, 'b'], [5, 'c'], [5, 'd']] as const) {
        await timers.advance(ms);
        await coalescer.push(text);
      }
      expect(published.map((p) => p.text)).toEqual(['A']);
      await timers.advance(14); // 29 ms: 24 ms after 'b' was held
      expect(published.map((p) => p.text)).toEqual(['A']);
      await timers.advance(1);
      expect(published).toEqual([{ at: 0, text: 'A' }, { at: 30, text: 'bcd' }]);
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
      const coalescer = new DeltaCoalescer(
        async (text) => {
          if (++calls === 2) throw new Error('fenced');
          published.push(text);
        },
        timers,
      );
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
