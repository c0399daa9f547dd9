import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { ASK_JOB_OPTIONS, JobName, QueueName, type SynthesizeJobData } from '@ask/ask-contracts';
import { type ContractQueue, contractQueue, enqueueJob, FairShare } from '@ask/event-stream';
import { activeTraceContext, inSpan, messagingAttributes, SpanKind } from '@ask/observability';

/** Enqueues synthesis with the ranked items; the job id is the ask id, so a retried retrieval cannot enqueue twice. */
@Injectable()
export class AskSynthesisProducer {
  private readonly queue: ContractQueue<QueueName.AskSynthesis>;

  constructor(
    @InjectQueue(QueueName.AskSynthesis) queue: Queue,
    private readonly fair: FairShare,
  ) {
    this.queue = contractQueue(QueueName.AskSynthesis, queue);
  }

  async enqueue(data: SynthesizeJobData): Promise<void> {
    // A producer span; the job carries its context, so the consumer's span is its child.
    await inSpan(
      `${QueueName.AskSynthesis} send`,
      () => ({ kind: SpanKind.PRODUCER, attributes: messagingAttributes(QueueName.AskSynthesis, data.askId) }),
      async () => {
        const trace = activeTraceContext();
        // Fair order between projects: this project's backlog does not stand before another's job.
        const priority = await this.fair.priority(QueueName.AskSynthesis, data.projectId);
        return enqueueJob(this.queue, JobName.Synthesize, trace ? { ...data, trace } : data, {
          ...ASK_JOB_OPTIONS,
          jobId: data.askId,
          ...(priority ? { priority } : {}),
        });
      },
    );
  }
}
