import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { ASK_JOB_OPTIONS, JobName, QueueName, type RetrieveJobData } from '@ask/ask-contracts';
import { type ContractQueue, contractQueue, enqueueJob, FairShare } from '@ask/event-stream';
import { activeTraceContext, inSpan, messagingAttributes, SpanKind } from '@ask/observability';

/** The one way the gateway enqueues work: a retrieval job whose job id is the ask id. */
@Injectable()
export class AskRetrievalProducer {
  private readonly queue: ContractQueue<QueueName.AskRetrieval>;

  constructor(
    @InjectQueue(QueueName.AskRetrieval) queue: Queue,
    private readonly fair: FairShare,
  ) {
    this.queue = contractQueue(QueueName.AskRetrieval, queue);
  }

  /** Enqueues the ask; a second call with the same ask id is a no-op (BullMQ job ids are unique). */
  async enqueue(data: RetrieveJobData): Promise<void> {
    // A producer span; the job carries its context, so the consumer's span is its child.
    await inSpan(
      `${QueueName.AskRetrieval} send`,
      () => ({ kind: SpanKind.PRODUCER, attributes: messagingAttributes(QueueName.AskRetrieval, data.askId) }),
      async () => {
        const trace = activeTraceContext();
        // Fair order between projects: this project's backlog does not stand before another's job.
        const priority = await this.fair.priority(QueueName.AskRetrieval, data.projectId);
        return enqueueJob(this.queue, JobName.Retrieve, trace ? { ...data, trace } : data, {
          ...ASK_JOB_OPTIONS,
          jobId: data.askId,
          ...(priority ? { priority } : {}),
        });
      },
    );
  }
}
