import { runDeadline } from './deadline';

// Pure: the deadline on Jest's fake clock (no test waits on real time).
describe(runDeadline.name, () => {
  const acceptedAt = '2026-01-01T00:00:00.000Z';
  beforeEach(() => jest.useFakeTimers({ now: Date.parse(acceptedAt) + 200 }));
  afterEach(() => jest.useRealTimers());

  it('aborts at acceptedAt + deadlineMs with a TimeoutError, not a millisecond before', () => {
    const { signal } = runDeadline(acceptedAt, 500);
    jest.advanceTimersByTime(299);
    expect(signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    const reason = signal.reason as DOMException;
    expect([signal.aborted, reason.name, reason.message]).toEqual([
      true,
      'TimeoutError',
      'the ask passed its deadline',
    ]);
  });

  it('aborts 1 ms from now when the deadline has already passed', () => {
    const { signal } = runDeadline(acceptedAt, 100);
    expect(signal.aborted).toBe(false);
    jest.advanceTimersByTime(1);
    expect(signal.aborted).toBe(true);
  });

  it('never aborts once cleared, and leaves no timer behind', () => {
    const deadline = runDeadline(acceptedAt, 500);
    deadline.clear();
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(10_000);
    expect(deadline.signal.aborted).toBe(false);
  });

  it('aborts with the lock-lost signal’s reason when the job’s lock is lost before the deadline', () => {
    const lockLost = new AbortController();
    const { signal, clear } = runDeadline(acceptedAt, 500, lockLost.signal);
    lockLost.abort('lock lost');
    expect([signal.aborted, signal.reason]).toEqual([true, 'lock lost']);
    clear();
  });
});
