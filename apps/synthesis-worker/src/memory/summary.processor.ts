import { Inject } from '@nestjs/common';
import { Processor } from '@nestjs/bullmq';
import { JobName, QueueName } from '@ask/ask-contracts';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { type ContractJob, type JobHandlers, JobProcessor } from '@ask/event-stream';
import { SummaryService } from './summary.service';

/**
 * Unpacks summary jobs (`ask-memory`) and hands them to {@link SummaryService}. A summariser's own
 * failure ends the job (recorded, nothing stored); only infrastructure errors are retried.
 */
@Processor(QueueName.AskMemory)
export class SummaryProcessor extends JobProcessor<QueueName.AskMemory> {
  readonly queue = QueueName.AskMemory;
  readonly handlers: JobHandlers<QueueName.AskMemory> = { [JobName.Summarise]: (job) => this.summarise(job) };

  constructor(
    private readonly summaries: SummaryService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  protected concurrency(): number {
    return this.config.MEMORY_CONCURRENCY;
  }

  private async summarise(job: ContractJob<QueueName.AskMemory>): Promise<void> {
    const result = await this.summaries.summarise(job.data);
    this.logger.log(`ask ${job.data.askId}: turn summary ${result.turn}, session summary ${result.session}`);
  }
}
