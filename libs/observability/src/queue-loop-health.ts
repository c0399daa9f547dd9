/** Something that emits `error` events (a BullMQ `Worker`: its fetch loop, stalled-jobs check, connections). */
export interface ErrorEmitter {
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/** Options of {@link QueueLoopHealth}. */
export interface QueueLoopHealthOptions {
  /**
   * How long one error keeps its queue unhealthy, and how often one distinct error is logged, in
   * milliseconds (default 10,000: a loop failing at every attempt errors many times a second, a lost
   * connection at each reconnect, at most every 2 s on a Cluster).
   */
  intervalMs?: number;
  /** Where the lines go (the app's logger); one per distinct error per interval. */
  log(line: string): void;
  now?: () => number;
}

/** A queue whose worker loop failed within the interval, with its latest error's text. */
export interface FailingQueue {
  queue: string;
  error: string;
}

/** Raised by {@link QueueLoopHealth.check} while a worker's queue loop is failing. */
export class QueueLoopFailingError extends Error {
  constructor(readonly failing: FailingQueue[]) {
    super(`queue loop failing: ${failing.map((f) => `${f.queue} (${f.error})`).join('; ')}`);
    this.name = 'QueueLoopFailingError';
  }
}

interface Seen {
  /** When this error was last logged. */
  loggedAt: number;
  /** Occurrences since that line. */
  since: number;
}

/**
 * Whether each watched worker's queue loop is working, from its `error` events: a BullMQ worker
 * whose fetch loop, stalled-jobs script or connection fails keeps running and retrying, so without
 * this it answers `/health` 200 while it takes no job. A queue is failing while its latest error is
 * less than `intervalMs` old. Errors are logged one line per distinct text (digits folded, so
 * `MOVED 9897 …` and `MOVED 12 …` are one) per interval, with how many came since its last line,
 * instead of one line per attempt (BullMQ's own fallback prints every one).
 */
export class QueueLoopHealth {
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly lastError = new Map<string, { at: number; error: string }>();
  private readonly seen = new Map<string, Seen>();

  constructor(private readonly options: QueueLoopHealthOptions) {
    this.intervalMs = options.intervalMs ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** Follows `worker`'s `error` events as queue `queue`'s. */
  watch(queue: string, worker: ErrorEmitter): void {
    worker.on('error', (err) => this.record(queue, err));
  }

  /** Counts one error of queue `queue`'s loop; logs it unless the same text was logged within the interval. */
  record(queue: string, err: unknown): void {
    const at = this.now();
    const error = err instanceof Error ? err.message : String(err);
    this.lastError.set(queue, { at, error });
    const key = `${queue}\u0000${error.replace(/\d+/g, '#')}`;
    const seen = this.seen.get(key);
    if (seen && at - seen.loggedAt < this.intervalMs) {
      seen.since += 1;
      return;
    }
    const more = seen && seen.since > 0 ? ` (${seen.since} more since the last line)` : '';
    this.options.log(`queue ${queue}: worker loop error: ${error}${more}`);
    this.seen.set(key, { loggedAt: at, since: 0 });
  }

  /** The queues failing now (latest error within the interval), by name. */
  failing(): FailingQueue[] {
    const at = this.now();
    return [...this.lastError.entries()]
      .filter(([, last]) => at - last.at < this.intervalMs)
      .map(([queue, last]) => ({ queue, error: last.error }))
      .sort((a, b) => a.queue.localeCompare(b.queue));
  }

  /**
   * A health check: resolves while no watched queue is failing.
   * @throws QueueLoopFailingError naming the failing queues and their latest errors.
   */
  async check(): Promise<void> {
    const failing = this.failing();
    if (failing.length > 0) throw new QueueLoopFailingError(failing);
  }
}
