import { Inject } from '@nestjs/common';
import { Processor } from '@nestjs/bullmq';
import { JobName, QueueName } from '@ask/ask-contracts';
import { toErrorEvent } from '@ask/ask-errors';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import {
  AskEventStream,
  type ContractJob,
  FairShare,
  FencedPublishError,
  JobProcessor,
  type JobHandlers,
} from '@ask/event-stream';
import { RetrievalService } from './retrieval.service';

/** Unpacks retrieval jobs and hands them to {@link RetrievalService}; ends the ask on the last failed attempt. */
@Processor(QueueName.AskRetrieval)
export class RetrievalProcessor extends JobProcessor<QueueName.AskRetrieval> {
  readonly queue = QueueName.AskRetrieval;
  readonly handlers: JobHandlers<QueueName.AskRetrieval> = { [JobName.Retrieve]: (job) => this.retrieve(job) };

  constructor(
    private readonly retrieval: RetrievalService,
    private readonly events: AskEventStream,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    fair: FairShare,
  ) {
    super(fair);
  }

  protected concurrency(): number {
    return this.config.RETRIEVAL_CONCURRENCY;
  }

  private async retrieve(job: ContractJob<QueueName.AskRetrieval>): Promise<void> {
    try {
      await this.retrieval.retrieve(job.data);
    } catch (err) {
      // The ask already ended (its session was deleted, or it was reconciled): nothing more to do.
      if (err instanceof FencedPublishError) return;
      await this.failedAttempt(job, `ask ${job.data.askId}: retrieval`, err, (error) =>
        this.events.publish(job.data.askId, 'error', toErrorEvent(error)).catch(ignoreFenced),
      );
    }
  }
}

/** A refused publish (the stream already ended) is not a failure of this job. */
function ignoreFenced(err: unknown): void {
  if (!(err instanceof FencedPublishError)) throw err;
}
