/**
 * How long text from the provider may wait before it is published as a `delta`, in ms. A provider
 * streams one chunk per token or two (hundreds per answer); at 25 ms a reader sees at most 40
 * updates a second, below what a person can follow, and events per answer grow with the answer's
 * duration instead of its tokens.
 */
export const DELTA_INTERVAL_MS = 25;
/** Buffered text of at least this many characters is published at once, without waiting (UTF-16 units). */
export const DELTA_MAX_CHARACTERS = 1_024;

/** The timer functions the coalescer uses; tests pass a manual clock. */
export interface CoalescerTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const REAL_TIMERS: CoalescerTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * Batches streamed text into fewer `delta` events: the first chunk is published at once; later
 * chunks are held until 25 ms after the first one held ({@link DELTA_INTERVAL_MS}) or until 1,024
 * characters are held, whichever comes first, then published as one delta; `flush` publishes what
 * is left. Publishes run one at a time, in order, so the deltas' concatenation is exactly the text
 * pushed. A failed publish (for example a fenced one: another run owns the ask) is thrown by the
 * next `push` or `flush`, so the caller stops streaming. An `intervalMs` of 0 turns coalescing off:
 * every chunk is published as its own delta (`SYNTHESIS_DELTA_INTERVAL_MS=0`, for comparison).
 */
export class DeltaCoalescer {
  private held = '';
  private timer: unknown;
  private first = true;
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown;

  constructor(
    private readonly publish: (text: string) => Promise<void>,
    private readonly timers: CoalescerTimers = REAL_TIMERS,
    private readonly intervalMs = DELTA_INTERVAL_MS,
    private readonly maxCharacters = DELTA_MAX_CHARACTERS,
  ) {}

  /**
   * Adds streamed text. Resolves once the text is published (first chunk, or a full buffer) or held.
   * @throws the error of an earlier failed publish.
   */
  async push(text: string): Promise<void> {
    this.throwIfFailed();
    if (text === '') return;
    this.held += text;
    if (this.first || this.intervalMs === 0 || this.held.length >= this.maxCharacters) {
      this.first = false;
      await this.release();
      return;
    }
    this.timer ??= this.timers.setTimeout(() => {
      this.timer = undefined;
      void this.release().catch(() => undefined);
    }, this.intervalMs);
  }

  /**
   * Publishes whatever is held and waits for every publish to finish (call before `done`).
   * @throws the error of a failed publish.
   */
  async flush(): Promise<void> {
    await this.release();
    this.throwIfFailed();
  }

  /** Drops held text and the timer without publishing (the stream failed). */
  discard(): void {
    this.held = '';
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private release(): Promise<void> {
    if (this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
      this.timer = undefined;
    }
    const text = this.held;
    this.held = '';
    if (text !== '') {
      this.chain = this.chain.then(async () => {
        if (this.failure !== undefined) return;
        try {
          await this.publish(text);
        } catch (err) {
          this.failure = err;
        }
      });
    }
    return this.chain.then(() => this.throwIfFailed());
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure;
  }
}
