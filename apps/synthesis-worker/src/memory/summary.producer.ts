import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { JobName, QueueName, type SummariseJobData } from '@ask/ask-contracts';
import { type ContractQueue, contractQueue, enqueueJob } from '@ask/event-stream';

/**
 * Summary jobs: a few attempts for infrastructure faults only (a summariser's own failure is
 * recorded and ends the job), bounded retention.
 */
export const SUMMARY_JOB_OPTIONS = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 10_000 },
  removeOnFail: { age: 86_400 },
} as const;

/** Enqueues the summary of a stored pair; the job id is `summary-<messageId>`, so it is enqueued once. */
@Injectable()
export class SummaryProducer {
  private readonly queue: ContractQueue<QueueName.AskMemory>;

  constructor(@InjectQueue(QueueName.AskMemory) queue: Queue) {
    this.queue = contractQueue(QueueName.AskMemory, queue);
  }

  async enqueue(data: SummariseJobData): Promise<void> {
    await enqueueJob(this.queue, JobName.Summarise, data, {
      ...SUMMARY_JOB_OPTIONS,
      jobId: `summary-${data.messageId}`,
    });
  }
}
