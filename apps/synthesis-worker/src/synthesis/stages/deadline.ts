/** The signal a run's upstream calls stop on, and the timer behind it. */
export interface RunDeadline {
  /** Aborted at the ask's deadline (reason a `TimeoutError`), or with `lockLost`'s reason when the job's lock is lost first. */
  signal: AbortSignal;
  /** Clears the deadline's timer (the run ended); the signal is not aborted by it. */
  clear(): void;
}

/**
 * Starts the deadline of an ask accepted at `acceptedAt` (ISO time) that must end within `deadlineMs`
 * milliseconds of it: the signal aborts at `acceptedAt + deadlineMs`, or 1 ms from now when that has
 * passed. A timer cleared when the run ends, not `AbortSignal.timeout`, which would hold each job's
 * signal until the deadline (under load, thousands alive); the same `TimeoutError` reason as it.
 */
export function runDeadline(acceptedAt: string, deadlineMs: number, lockLost?: AbortSignal): RunDeadline {
  const deadline = Date.parse(acceptedAt) + deadlineMs;
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('the ask passed its deadline', 'TimeoutError')),
    Math.max(1, deadline - Date.now()),
  );
  return {
    signal: lockLost ? AbortSignal.any([controller.signal, lockLost]) : controller.signal,
    clear: () => clearTimeout(timer),
  };
}
