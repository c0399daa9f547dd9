import { Inject, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { JobName, QueueName, type SynthesizeJobData } from '@ask/ask-contracts';
import { internalError, toErrorEvent } from '@ask/ask-errors';
import { APP_CONFIG, type AppConfig, loadConfig } from '@ask/config';
import { AskEventStream } from '@ask/event-stream';
import { SynthesisService } from './synthesis.service';

/**
 * The worker's lock and stalled-check settings. Read when the module loads, because `@Processor`
 * options are fixed when the class is declared (the same environment AppConfigModule reads at boot).
 */
const { SYNTHESIS_LOCK_DURATION_MS, SYNTHESIS_STALLED_INTERVAL_MS } = loadConfig();

/**
 * Unpacks synthesis jobs and hands them to {@link SynthesisService}. Infrastructure failures are
 * retried by BullMQ (attempts from ASK_JOB_OPTIONS); the last failed attempt ends the ask with a typed
 * `error` event so no client waits forever. A worker killed mid-job leaves a stalled job that another
 * worker picks up (BullMQ stalled-job recovery): within SYNTHESIS_LOCK_DURATION_MS +
 * SYNTHESIS_STALLED_INTERVAL_MS of the kill.
 */
@Processor(QueueName.AskSynthesis, {
  lockDuration: SYNTHESIS_LOCK_DURATION_MS,
  stalledInterval: SYNTHESIS_STALLED_INTERVAL_MS,
  maxStalledCount: 2,
})
export class SynthesisProcessor extends WorkerHost implements OnApplicationBootstrap {
  private readonly logger = new Logger(SynthesisProcessor.name);

  constructor(
    private readonly synthesis: SynthesisService,
    private readonly events: AskEventStream,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    this.worker.concurrency = this.config.SYNTHESIS_CONCURRENCY;
  }

  async process(job: Job<SynthesizeJobData>): Promise<void> {
    if (job.name !== JobName.Synthesize) throw new Error(`unknown job ${job.name} on ${QueueName.AskSynthesis}`);
    const attempt = job.attemptsMade + 1 + (job.stalledCounter ?? 0);
    try {
      await this.synthesis.synthesize(job.data, { attempt });
    } catch (err) {
      const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      this.logger.error(`ask ${job.data.askId}: synthesis attempt ${attempt} failed: ${(err as Error).message}`);
      if (last) await this.events.publish(job.data.askId, 'error', toErrorEvent(internalError()));
      throw err;
    }
  }
}
