import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { ASK_JOB_OPTIONS, type IngestJobData, JobName, QueueName } from '@ask/ask-contracts';
import { type ContractQueue, contractQueue, enqueueJob } from '@ask/event-stream';

/** The one way the gateway enqueues ingestion work: a job whose id is the ingestion id. */
@Injectable()
export class IngestionProducer {
  private readonly queue: ContractQueue<QueueName.AskIngestion>;

  constructor(@InjectQueue(QueueName.AskIngestion) queue: Queue) {
    this.queue = contractQueue(QueueName.AskIngestion, queue);
  }

  /** Enqueues a stored ingestion; a second call with the same id is a no-op (BullMQ job ids are unique). */
  async enqueue(name: JobName.Ingest | JobName.Reembed, data: IngestJobData): Promise<void> {
    await enqueueJob(this.queue, name, data, { ...ASK_JOB_OPTIONS, jobId: data.ingestionId });
  }
}
