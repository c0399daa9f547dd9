import { randomUUID } from 'node:crypto';
import { JobName, QueueName } from '@ask/ask-contracts';
import { type AskError, internalError } from '@ask/ask-errors';
import type { ContractJob, JobNameOf } from './job-contract';

/**
 * Every job name each queue carries, as the contract (ask-contracts `JobPayloads`) lists them. The
 * `satisfies` clause makes a missing queue, or a name of another queue, a compile error; a name of the
 * contract missing here fails every worker's boot instead ({@link JobHandlers} requires a handler for
 * it, which {@link assertJobHandlers} then finds the queue does not carry).
 */
export const QUEUE_JOB_NAMES = {
  [QueueName.AskRetrieval]: [JobName.Retrieve],
  [QueueName.AskSynthesis]: [JobName.Synthesize],
  [QueueName.AskIngestion]: [JobName.Ingest, JobName.Reembed],
  [QueueName.AskMemory]: [JobName.Summarise],
} as const satisfies { readonly [Q in QueueName]: readonly JobNameOf<Q>[] };

/** A processor's handlers for queue `Q`: exactly one per job name of the queue. */
export type JobHandlers<Q extends QueueName> = {
  readonly [N in JobNameOf<Q>]: (job: ContractJob<Q>, token?: string) => Promise<void>;
};

/**
 * Checks, at a worker's boot, that `handlers` has exactly one handler for every job name of `queue`
 * ({@link QUEUE_JOB_NAMES}) and none for a name the queue does not carry: a worker that would leave
 * a job name unhandled (and fail every such job) refuses to start instead.
 * @throws Error `queue <q>: no handler for job <n>[, …]; handlers for jobs it does not carry: <m>` listing both kinds.
 */
export function assertJobHandlers(queue: QueueName, handlers: object): void {
  const expected: readonly string[] = QUEUE_JOB_NAMES[queue];
  const given = Object.keys(handlers).filter(
    (name) => typeof (handlers as Record<string, unknown>)[name] === 'function',
  );
  const missing = expected.filter((name) => !given.includes(name));
  const unknown = given.filter((name) => !expected.includes(name));
  if (missing.length === 0 && unknown.length === 0) return;
  const parts = [
    missing.length ? `no handler for job ${missing.join(', ')}` : '',
    unknown.length ? `handlers for jobs it does not carry: ${unknown.join(', ')}` : '',
  ].filter(Boolean);
  throw new Error(`queue ${queue}: ${parts.join('; ')}`);
}

/**
 * Runs the handler of `job.name` (the one name guard of every worker).
 * @throws Error `unknown job <name> on <queue>` when no handler has that name (a job of a newer
 *   producer, or one added by hand); BullMQ retries it per the job's attempts, then fails it.
 */
export function dispatchJob<Q extends QueueName>(
  queue: Q,
  handlers: JobHandlers<Q>,
  job: ContractJob<Q>,
  token?: string,
): Promise<void> {
  const handler = (handlers as Record<string, JobHandlers<Q>[JobNameOf<Q>] | undefined>)[job.name];
  if (!handler) return Promise.reject(new Error(`unknown job ${job.name} on ${queue}`));
  return handler(job, token);
}

/** True when this is the job's last attempt (no retry follows a failure): `attemptsMade + 1 ≥ attempts`. */
export function isLastAttempt(job: { attemptsMade: number; opts: { attempts?: number } }): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

/**
 * The typed error that ends a job's ask or ingestion after its last attempt failed: a 500
 * `internal_error` whose details carry a fresh error id (`error_id=<uuid>`), logged with the failure
 * (`<what>: last attempt <n> failed (error_id=<uuid>): <message>`), so the client's error event and
 * the worker's log line can be matched.
 */
export function lastAttemptError(
  job: { attemptsMade: number },
  what: string,
  err: unknown,
  log: (line: string) => void,
): AskError {
  const errorId = randomUUID();
  log(
    `${what}: last attempt ${job.attemptsMade + 1} failed (error_id=${errorId}): ${(err as Error)?.message ?? String(err)}`,
  );
  return internalError(errorId);
}
