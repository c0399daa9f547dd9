import { Inject, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import { JobName, QueueName } from '@ask/ask-contracts';
import { APP_CONFIG, type AppConfig, loadConfig } from '@ask/config';
import {
  assertJobHandlers,
  type ContractJob,
  dispatchJob,
  IngestionEventStream,
  isLastAttempt,
  type JobHandlers,
  lastAttemptError,
} from '@ask/event-stream';
import { countTokens, type IngestionEventSink, IngestionRunner } from '@ask/ingestion';
import { inJobSpan, messagingAttributes } from '@ask/observability';

/** Lock of a running ingestion job; read when the module loads, because `@Processor` options are fixed then. */
const { INGESTION_LOCK_DURATION_MS } = loadConfig();

/**
 * Unpacks ingestion jobs (`ingest`, `reembed`) and hands them to {@link IngestionRunner}, with the
 * ingestion's Redis stream as the event sink. Infrastructure failures are retried by BullMQ
 * (attempts from ASK_JOB_OPTIONS; the run restarts from its stored upload, unchanged documents are
 * skipped); the last failed attempt ends the ingestion `failed` with a 500 `internal_error` so no
 * client waits forever.
 */
@Processor(QueueName.AskIngestion, { lockDuration: INGESTION_LOCK_DURATION_MS, maxStalledCount: 2 })
export class IngestionProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(IngestionProcessor.name);
  /** One handler per job name of the queue (checked at boot): both run the stored upload. */
  private readonly handlers: JobHandlers<QueueName.AskIngestion> = {
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

  onApplicationBootstrap(): void {
    // The chunker's o200k ranks load at boot (one synchronous step; its length: bench/RESULTS.md, "Token
    // counting", "Load time, memory"), not inside the first upload's job, where they held this process's
    // event loop (bench/hostile).
    assertJobHandlers(QueueName.AskIngestion, this.handlers);
    countTokens('warm up');
    this.worker.concurrency = this.config.INGESTION_CONCURRENCY;
  }

  process(job: ContractJob<QueueName.AskIngestion>): Promise<void> {
    // With tracing on, one trace per run: its embedding calls are the span's children.
    return inJobSpan(
      `${QueueName.AskIngestion} process`,
      undefined,
      () => ({
        ...messagingAttributes(QueueName.AskIngestion, job.data.ingestionId),
        'ask.project.id': job.data.projectId,
        'ask.ingestion.id': job.data.ingestionId,
        'ask.attempt': job.attemptsMade + 1,
      }),
      () => dispatchJob(QueueName.AskIngestion, this.handlers, job),
    );
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
      if (!isLastAttempt(job)) {
        this.logger.error(
          `ingestion ${ingestionId}: attempt ${job.attemptsMade + 1} failed: ${(err as Error).message}`,
        );
        throw err;
      }
      const error = lastAttemptError(job, `ingestion ${ingestionId}`, err, (line) => this.logger.error(line));
      await this.runner.fail(ingestionId, error, null, [], sink);
      throw err;
    }
  }
}
