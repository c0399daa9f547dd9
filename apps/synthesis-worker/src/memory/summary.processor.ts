import { Inject, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { JobName, QueueName } from '@ask/ask-contracts';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { type ContractJob } from '@ask/event-stream';
import { SummaryService } from './summary.service';

/**
 * Unpacks summary jobs (`ask-memory`) and hands them to {@link SummaryService}. A summariser's own
 * failure ends the job (recorded, nothing stored); only infrastructure errors are retried.
 */
@Processor(QueueName.AskMemory)
export class SummaryProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(SummaryProcessor.name);

  constructor(
    private readonly summaries: SummaryService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    this.worker.concurrency = this.config.MEMORY_CONCURRENCY;
  }

  async process(job: ContractJob<QueueName.AskMemory>): Promise<void> {
    if (job.name !== JobName.Summarize) throw new Error(`unknown job ${job.name} on ${QueueName.AskMemory}`);
    const result = await this.summaries.summarize(job.data);
    this.logger.log(`ask ${job.data.askId}: turn summary ${result.turn}, session summary ${result.session}`);
  }
}
