import { InjectQueue } from '@nestjs/bullmq';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bullmq';
import { ASK_JOB_OPTIONS, JobName, QueueName, type SynthesizeJobData } from '@ask/ask-contracts';

/** Enqueues synthesis with the ranked items; the job id is the ask id, so a retried retrieval cannot enqueue twice. */
@Injectable()
export class AskSynthesisProducer {
  constructor(@InjectQueue(QueueName.AskSynthesis) private readonly queue: Queue<SynthesizeJobData>) {}

  async enqueue(data: SynthesizeJobData): Promise<void> {
    await this.queue.add(JobName.Synthesize, data, { ...ASK_JOB_OPTIONS, jobId: data.askId });
  }
}
