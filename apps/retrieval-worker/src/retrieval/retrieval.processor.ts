import { inAskJob } from '@ask/observability';
import { Inject, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { JobName, QueueName } from '@ask/ask-contracts';
import { toErrorEvent } from '@ask/ask-errors';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import {
  AskEventStream,
  assertJobHandlers,
  type ContractJob,
  dispatchJob,
  FairShare,
  FencedPublishError,
  isLastAttempt,
  type JobHandlers,
  lastAttemptError,
} from '@ask/event-stream';
import { RetrievalService } from './retrieval.service';

/** Unpacks retrieval jobs and hands them to {@link RetrievalService}; ends the ask on the last failed attempt. */
@Processor(QueueName.AskRetrieval)
export class RetrievalProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(RetrievalProcessor.name);
  /** One handler per job name of the queue (checked at boot). */
  private readonly handlers: JobHandlers<QueueName.AskRetrieval> = { [JobName.Retrieve]: (job) => this.retrieve(job) };

  constructor(
    private readonly retrieval: RetrievalService,
    private readonly events: AskEventStream,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly fair: FairShare,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    assertJobHandlers(QueueName.AskRetrieval, this.handlers);
    this.worker.concurrency = this.config.RETRIEVAL_CONCURRENCY;
  }

  async process(job: ContractJob<QueueName.AskRetrieval>, token?: string): Promise<void> {
    // Log lines with the job's ids; with tracing on, its span continues the trace the job carries.
    // Within the project's share of the queue's slots (parked at its cap: FairShare).
    return inAskJob(QueueName.AskRetrieval, job, () =>
      this.fair.run(this.worker, job, token, () => dispatchJob(QueueName.AskRetrieval, this.handlers, job)),
    );
  }

  private async retrieve(job: ContractJob<QueueName.AskRetrieval>): Promise<void> {
    try {
      await this.retrieval.retrieve(job.data);
    } catch (err) {
      // The ask already ended (its session was deleted, or it was reconciled): nothing more to do.
      if (err instanceof FencedPublishError) return;
      if (!isLastAttempt(job)) {
        this.logger.error(
          `ask ${job.data.askId}: retrieval attempt ${job.attemptsMade + 1} failed: ${(err as Error).message}`,
        );
        throw err;
      }
      const error = lastAttemptError(job, `ask ${job.data.askId}: retrieval`, err, (line) => this.logger.error(line));
      await this.events.publish(job.data.askId, 'error', toErrorEvent(error)).catch(ignoreFenced);
      throw err;
    }
  }
}

/** A refused publish (the stream already ended) is not a failure of this job. */
function ignoreFenced(err: unknown): void {
  if (!(err instanceof FencedPublishError)) throw err;
}
