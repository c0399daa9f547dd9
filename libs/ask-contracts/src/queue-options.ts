/**
 * Job options shared by producers: the job id is the ask id (so a repeated enqueue of the same ask is
 * a no-op), a few attempts for infrastructure faults (typed errors end the ask without a retry), and
 * bounded retention of finished jobs.
 */
export const ASK_JOB_OPTIONS = {
  // 0.5 + 1 + 2 + 4 s of backoff rides out a database or Redis restart of a few seconds.
  attempts: 5,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 86_400 },
} as const;
