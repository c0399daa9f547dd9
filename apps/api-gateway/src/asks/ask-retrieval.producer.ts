import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { ASK_JOB_OPTIONS, JobName, QueueName, type RetrieveJobData } from '@ask/ask-contracts';
import { type ContractQueue, contractQueue, enqueueJob } from '@ask/event-stream';

/** The one way the gateway enqueues work: a retrieval job whose job id is the ask id. */
@Injectable()
export class AskRetrievalProducer {
  private readonly queue: ContractQueue<QueueName.AskRetrieval>;

  constructor(@InjectQueue(QueueName.AskRetrieval) queue: Queue) {
    this.queue = contractQueue(QueueName.AskRetrieval, queue);
  }

  /** Enqueues the ask; a second call with the same ask id is a no-op (BullMQ job ids are unique). */
  async enqueue(data: RetrieveJobData): Promise<void> {
    await enqueueJob(this.queue, JobName.Retrieve, data, { ...ASK_JOB_OPTIONS, jobId: data.askId });
  }
}
