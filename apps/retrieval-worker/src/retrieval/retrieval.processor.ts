import { inAskJob } from '@ask/observability';
import { Inject, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { JobName, QueueName } from '@ask/ask-contracts';
import { internalError, toErrorEvent } from '@ask/ask-errors';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { AskEventStream, type ContractJob, FairShare, FencedPublishError } from '@ask/event-stream';
import { RetrievalService } from './retrieval.service';

/** Unpacks retrieval jobs and hands them to {@link RetrievalService}; ends the ask on the last failed attempt. */
@Processor(QueueName.AskRetrieval)
export class RetrievalProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(RetrievalProcessor.name);

  constructor(
    private readonly retrieval: RetrievalService,
    private readonly events: AskEventStream,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly fair: FairShare,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    this.worker.concurrency = this.config.RETRIEVAL_CONCURRENCY;
  }

  async process(job: ContractJob<QueueName.AskRetrieval>, token?: string): Promise<void> {
    // Log lines with the job's ids; with tracing on, its span continues the trace the job carries.
    // Within the project's share of the queue's slots (parked at its cap: FairShare).
    return inAskJob(QueueName.AskRetrieval, job, () => this.fair.run(this.worker, job, token, () => this.handle(job)));
  }

  private async handle(job: ContractJob<QueueName.AskRetrieval>): Promise<void> {
    if (job.name !== JobName.Retrieve) throw new Error(`unknown job ${job.name} on ${QueueName.AskRetrieval}`);
    try {
      await this.retrieval.retrieve(job.data);
    } catch (err) {
      // The ask already ended (its session was deleted, or it was reconciled): nothing more to do.
      if (err instanceof FencedPublishError) return;
      const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      this.logger.error(
        `ask ${job.data.askId}: retrieval attempt ${job.attemptsMade + 1} failed: ${(err as Error).message}`,
      );
      if (last) await this.events.publish(job.data.askId, 'error', toErrorEvent(internalError())).catch(ignoreFenced);
      throw err;
    }
  }
}

/** A refused publish (the stream already ended) is not a failure of this job. */
function ignoreFenced(err: unknown): void {
  if (!(err instanceof FencedPublishError)) throw err;
}
