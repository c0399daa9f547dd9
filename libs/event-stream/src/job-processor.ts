import {
  type DynamicModule,
  Injectable,
  Logger,
  Module,
  type OnApplicationBootstrap,
  type OnModuleInit,
} from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { WorkerHost } from '@nestjs/bullmq';
import { QueueName } from '@ask/ask-contracts';
import type { AskError } from '@ask/ask-errors';
import { inAskJob, inJobSpan, messagingAttributes } from '@ask/observability';
import type { FairShare } from './fair-share';
import type { ContractJob } from './job-contract';
import {
  assertJobHandlers,
  dispatchJob,
  isLastAttempt,
  type JobHandlers,
  lastAttemptError,
  QUEUE_JOB_NAMES,
} from './job-handlers';

/**
 * The one base of every worker's processor: the name guard ({@link dispatchJob}), the trace and log
 * ids of each job ({@link traceJob}), the project's fair share of the queue's slots when given, the
 * handler check and the concurrency at boot, and the last-attempt typed error ({@link failedAttempt}).
 * A subclass declares its queue, one handler per job name and its concurrency; `@Processor(queue)`
 * stays on the subclass (its options are the subclass's).
 */
export abstract class JobProcessor<Q extends QueueName> extends WorkerHost implements OnApplicationBootstrap {
  /** The queue this processor consumes (the one of its `@Processor`). */
  abstract readonly queue: Q;
  /** One handler per job name of the queue (checked at boot, here and by {@link WorkerJobsModule}). */
  abstract readonly handlers: JobHandlers<Q>;
  protected readonly logger = new Logger(this.constructor.name);

  /** `fair`: run each job within its project's share of the queue's slots (parked at its cap). */
  constructor(private readonly fair?: FairShare) {
    super();
  }

  /** How many jobs this process runs at once (from the config). */
  protected abstract concurrency(): number;

  onApplicationBootstrap(): void {
    assertJobHandlers(this.queue, this.handlers);
    this.worker.concurrency = this.concurrency();
  }

  process(job: ContractJob<Q>, token?: string): Promise<void> {
    const dispatch = () => dispatchJob(this.queue, this.handlers, job, token);
    return traceJob(this.queue, job, () => (this.fair ? this.fair.run(this.worker, job, token, dispatch) : dispatch()));
  }

  /**
   * A failed attempt of `job`, in every worker the same way: before the last attempt it is logged
   * (`<what>: attempt <n> failed: <message>`) and rethrown, so BullMQ retries it; on the last one
   * the typed 500 `internal_error` with a fresh error id is logged with the failure
   * ({@link lastAttemptError}) and handed to `end` (which ends the ask or the ingestion with it, so no
   * client waits forever), then the failure is rethrown (BullMQ fails the job).
   * @throws `err`, always; or what `end` throws.
   */
  protected failedAttempt(
    job: ContractJob<Q>,
    what: string,
    err: unknown,
    end: (error: AskError) => Promise<unknown>,
  ): Promise<never> {
    return failedAttempt(job, what, err, (line) => this.logger.error(line), end);
  }
}

/** {@link JobProcessor.failedAttempt} for a caller without the base class; `log` gets the line. */
export async function failedAttempt(
  job: { attemptsMade: number; opts: { attempts?: number } },
  what: string,
  err: unknown,
  log: (line: string) => void,
  end: (error: AskError) => Promise<unknown>,
): Promise<never> {
  if (!isLastAttempt(job)) {
    log(`${what}: attempt ${job.attemptsMade + 1} failed: ${(err as Error)?.message ?? String(err)}`);
    throw err;
  }
  await end(lastAttemptError(job, what, err, log));
  throw err;
}

/**
 * Runs a job's handler in its trace: an ask job (retrieval, synthesis, memory) with the ask's log
 * ids and its `<queue> process` span continuing the trace it carries ({@link inAskJob}); an
 * ingestion job in one span per run (its embedding calls are the span's children).
 */
export function traceJob<Q extends QueueName, T>(queue: Q, job: ContractJob<Q>, fn: () => Promise<T>): Promise<T> {
  switch (queue) {
    case QueueName.AskRetrieval:
    case QueueName.AskSynthesis:
    case QueueName.AskMemory:
      return inAskJob(
        queue,
        job as ContractJob<QueueName.AskRetrieval | QueueName.AskSynthesis | QueueName.AskMemory>,
        fn,
      );
    case QueueName.AskIngestion: {
      const { ingestionId, projectId } = (job as ContractJob<QueueName.AskIngestion>).data;
      return inJobSpan(
        `${queue} process`,
        undefined,
        () => ({
          ...messagingAttributes(queue, ingestionId),
          'ask.project.id': projectId,
          'ask.ingestion.id': ingestionId,
          'ask.attempt': job.attemptsMade + 1,
        }),
        fn,
      );
    }
    default: {
      const unknown: never = queue;
      throw new Error(`no trace for queue ${String(unknown)}`);
    }
  }
}

/** What {@link assertOneProcessorPerJob} reads of a processor. */
export interface ProcessorLike {
  readonly queue: QueueName;
  readonly handlers: object;
  readonly constructor: { name: string };
}

/**
 * Checks, at a worker's boot, that every job name of each queue it consumes has exactly one
 * processor among `processors` (immich `job.repository.ts` `setup()`): a name no processor handles
 * would fail every such job, and two processors on one queue would split its jobs between them.
 * @throws Error `worker jobs: <queue>/<job> has no processor; <queue>/<job> has 2 processors (A, B); …`
 */
export function assertOneProcessorPerJob(queues: readonly QueueName[], processors: readonly ProcessorLike[]): void {
  const problems: string[] = [];
  for (const queue of queues) {
    for (const name of QUEUE_JOB_NAMES[queue] as readonly string[]) {
      const owners = processors.filter(
        (p) => p.queue === queue && typeof (p.handlers as Record<string, unknown>)[name] === 'function',
      );
      if (owners.length === 0) problems.push(`${queue}/${name} has no processor`);
      else if (owners.length > 1)
        problems.push(
          `${queue}/${name} has ${owners.length} processors (${owners.map((p) => p.constructor.name).join(', ')})`,
        );
    }
  }
  const stray = processors.filter((p) => !queues.includes(p.queue));
  for (const p of stray) problems.push(`${p.constructor.name} consumes ${p.queue}, which this worker does not declare`);
  if (problems.length) throw new Error(`worker jobs: ${problems.join('; ')}`);
}

/** Runs {@link assertOneProcessorPerJob} over every {@link JobProcessor} of the app, before it starts. */
@Injectable()
export class WorkerJobsCheck implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly queues: readonly QueueName[],
  ) {}

  onModuleInit(): void {
    const processors = this.discovery
      .getProviders()
      .map((wrapper) => wrapper.instance as unknown)
      .filter((instance): instance is JobProcessor<QueueName> => instance instanceof JobProcessor);
    assertOneProcessorPerJob(this.queues, processors);
  }
}

/**
 * Imported by each worker's module with the queues it consumes: the boot fails (the app's `init`
 * rejects) unless every job name of those queues has exactly one processor.
 */
@Module({})
export class WorkerJobsModule {
  static forQueues(...queues: QueueName[]): DynamicModule {
    return {
      module: WorkerJobsModule,
      imports: [DiscoveryModule],
      providers: [
        {
          provide: WorkerJobsCheck,
          inject: [DiscoveryService],
          useFactory: (discovery: DiscoveryService) => new WorkerJobsCheck(discovery, queues),
        },
      ],
    };
  }
}
