import { Inject } from '@nestjs/common';
import { Processor } from '@nestjs/bullmq';
import { JobName, QueueName } from '@ask/ask-contracts';
import { APP_CONFIG, type AppConfig, appConfig } from '@ask/config';
import { type ContractJob, IngestionEventStream, type JobHandlers, JobProcessor } from '@ask/event-stream';
import { countTokens, type IngestionEventSink, IngestionRunner } from '@ask/ingestion';

/**
 * Lock of a running ingestion job; read when the module loads, because `@Processor` options are fixed
 * then: the process's one config, the object AppConfigModule provides.
 */
const { INGESTION_LOCK_DURATION_MS } = appConfig();

/**
 * Unpacks ingestion jobs (`ingest`, `reembed`) and hands them to {@link IngestionRunner}, with the
 * ingestion's Redis stream as the event sink. Infrastructure failures are retried by BullMQ
 * (attempts from ASK_JOB_OPTIONS; the run restarts from its stored upload, unchanged documents are
 * skipped); the last failed attempt ends the ingestion `failed` with a 500 `internal_error` so no
 * client waits forever.
 */
@Processor(QueueName.AskIngestion, { lockDuration: INGESTION_LOCK_DURATION_MS, maxStalledCount: 2 })
export class IngestionProcessor extends JobProcessor<QueueName.AskIngestion> {
  readonly queue = QueueName.AskIngestion;
  /** Both job names run the stored upload. */
  readonly handlers: JobHandlers<QueueName.AskIngestion> = {
    [JobName.Ingest]: (job) => this.run(job),
    [JobName.Reembed]: (job) => this.run(job),
  };

  constructor(
    private readonly runner: IngestionRunner,
    private readonly events: IngestionEventStream,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  protected concurrency(): number {
    return this.config.INGESTION_CONCURRENCY;
  }

  override onApplicationBootstrap(): void {
    // The chunker's o200k ranks load at boot (one synchronous step; its length: bench/RESULTS.md, "Token
    // counting", "Load time, memory"), not inside the first upload's job, where they held this process's
    // event loop (bench/hostile).
    super.onApplicationBootstrap();
    countTokens('warm up');
  }

  private async run(job: ContractJob<QueueName.AskIngestion>): Promise<void> {
    const { ingestionId, projectId } = job.data;
    const sink: IngestionEventSink = (type, data) => this.events.publish(ingestionId, type, data);
    try {
      const outcome = await this.runner.run(projectId, ingestionId, sink, {
        attempt: job.attemptsMade + 1,
        embeddingThreads: this.config.INGESTION_EMBEDDING_THREADS,
      });
      this.logger.log(`ingestion ${ingestionId} (${job.name}): ${outcome}`);
    } catch (err) {
      await this.failedAttempt(job, `ingestion ${ingestionId}`, err, (error) =>
        this.runner.fail(ingestionId, error, null, [], sink),
      );
    }
  }
}
