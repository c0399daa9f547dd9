import { Inject, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { JobName, QueueName } from '@ask/ask-contracts';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { assertJobHandlers, type ContractJob, dispatchJob, type JobHandlers } from '@ask/event-stream';
import { SummaryService } from './summary.service';

/**
 * Unpacks summary jobs (`ask-memory`) and hands them to {@link SummaryService}. A summariser's own
 * failure ends the job (recorded, nothing stored); only infrastructure errors are retried.
 */
@Processor(QueueName.AskMemory)
export class SummaryProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(SummaryProcessor.name);
  /** One handler per job name of the queue (checked at boot). */
  private readonly handlers: JobHandlers<QueueName.AskMemory> = { [JobName.Summarise]: (job) => this.summarise(job) };

  constructor(
    private readonly summaries: SummaryService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    assertJobHandlers(QueueName.AskMemory, this.handlers);
    this.worker.concurrency = this.config.MEMORY_CONCURRENCY;
  }

  process(job: ContractJob<QueueName.AskMemory>): Promise<void> {
    return dispatchJob(QueueName.AskMemory, this.handlers, job);
  }

  private async summarise(job: ContractJob<QueueName.AskMemory>): Promise<void> {
    const result = await this.summaries.summarise(job.data);
    this.logger.log(`ask ${job.data.askId}: turn summary ${result.turn}, session summary ${result.session}`);
  }
}
