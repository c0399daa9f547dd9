import type { Job, JobsOptions, Queue } from 'bullmq';
import type { JobPayloads, QueueName } from '@ask/ask-contracts';

/** The job names queue `Q` carries (ask-contracts `JobPayloads`). */
export type JobNameOf<Q extends QueueName> = JobPayloads[Q]['name'];

/** The payload job `N` of queue `Q` carries: a queue, job name and payload that do not belong together do not compile. */
export type JobDataOf<Q extends QueueName, N extends JobNameOf<Q> = JobNameOf<Q>> = Extract<
  JobPayloads[Q],
  { name: N }
>['data'];

/** A BullMQ queue typed by the contract: `add` accepts only queue `Q`'s job names with their payloads. */
export type ContractQueue<Q extends QueueName> = Queue<JobDataOf<Q>, unknown, JobNameOf<Q>>;

/** A job as a processor of queue `Q` receives it. */
export type ContractJob<Q extends QueueName> = Job<JobDataOf<Q>, unknown, JobNameOf<Q>>;

/**
 * Types an injected queue by the contract, after checking at run time that it is the queue named
 * (`@InjectQueue(QueueName.X)` takes a string the compiler cannot relate to the parameter's type).
 * @throws Error when the queue's name is not `name` (a wiring mistake, found at boot).
 */
export function contractQueue<Q extends QueueName>(name: Q, queue: Queue): ContractQueue<Q> {
  if (queue.name !== name) throw new Error(`queue ${queue.name} injected where ${name} was expected`);
  return queue as ContractQueue<Q>;
}

/**
 * Adds job `jobName` with `data` to `queue`; the three must be a pairing of the contract.
 * @returns the BullMQ job id (the given `opts.jobId` when set: a second add with that id is a no-op).
 */
export async function enqueueJob<Q extends QueueName, N extends JobNameOf<Q>>(
  queue: ContractQueue<Q>,
  jobName: N,
  data: JobDataOf<Q, N>,
  opts?: JobsOptions,
): Promise<string | undefined> {
  // The signature above is the check; BullMQ's own generics cannot follow a generic `Q`.
  const job = await (queue as Queue).add(jobName, data, opts);
  return job.id;
}
