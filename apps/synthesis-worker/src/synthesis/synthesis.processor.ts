import { Inject } from '@nestjs/common';
import { Processor } from '@nestjs/bullmq';
import { JobName, QueueName } from '@ask/ask-contracts';
import { APP_CONFIG, type AppConfig, appConfig } from '@ask/config';
import { SynthesisService } from './synthesis.service';
import { type ContractJob, FairShare, type JobHandlers, JobProcessor } from '@ask/event-stream';

/**
 * The worker's lock and stalled-check settings. Read when the module loads, because `@Processor`
 * options are fixed when the class is declared: the process's one config, the object AppConfigModule provides.
 */
const { SYNTHESIS_LOCK_DURATION_MS, SYNTHESIS_LOCK_RENEW_MS, SYNTHESIS_STALLED_INTERVAL_MS } = appConfig();

/**
 * Unpacks synthesis jobs and hands them to {@link SynthesisService}. Infrastructure failures are
 * retried by BullMQ (attempts from ASK_JOB_OPTIONS); the last failed attempt ends the ask with a typed
 * `error` event so no client waits forever. A worker killed mid-job leaves a stalled job that another
 * worker picks up (BullMQ stalled-job recovery): within SYNTHESIS_LOCK_DURATION_MS +
 * SYNTHESIS_STALLED_INTERVAL_MS of the kill (8 s with the defaults 6 s and 2 s; the lock is renewed
 * every SYNTHESIS_LOCK_RENEW_MS, 2 s).
 *
 * A worker that was paused past its lock (SIGSTOP, a long GC or event-loop stall) finds, when it runs
 * again, that BullMQ could not renew the lock (`lockRenewalFailed`) or moved the job back as stalled
 * (`stalled`): the run's signal fires and it stops. Its publishes are fenced in any case (see
 * SynthesisService), so it never writes into the stream of the run that took over.
 */
@Processor(QueueName.AskSynthesis, {
  lockDuration: SYNTHESIS_LOCK_DURATION_MS,
  lockRenewTime: SYNTHESIS_LOCK_RENEW_MS,
  stalledInterval: SYNTHESIS_STALLED_INTERVAL_MS,
  maxStalledCount: 2,
})
export class SynthesisProcessor extends JobProcessor<QueueName.AskSynthesis> {
  readonly queue = QueueName.AskSynthesis;
  /** The running job's stop signal, per job id (one run per job id in this process). */
  private readonly running = new Map<string, AbortController>();
  readonly handlers: JobHandlers<QueueName.AskSynthesis> = {
    [JobName.Synthesize]: (job) => this.synthesize(job),
  };

  constructor(
    private readonly synthesis: SynthesisService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    fair: FairShare,
  ) {
    super(fair);
  }

  protected concurrency(): number {
    return this.config.SYNTHESIS_CONCURRENCY;
  }

  override onApplicationBootstrap(): void {
    super.onApplicationBootstrap();
    this.worker.on('lockRenewalFailed', (jobIds: string[]) =>
      jobIds.forEach((id) => this.stop(id, 'its job lock could not be renewed')),
    );
    this.worker.on('stalled', (jobId: string) => this.stop(jobId, 'its job was moved back as stalled'));
  }

  private async synthesize(job: ContractJob<QueueName.AskSynthesis>): Promise<void> {
    const attempt = job.attemptsMade + 1 + (job.stalledCounter ?? 0);
    const id = job.id ?? job.data.askId;
    // A job taken up again by this same process supersedes the run still going here.
    this.stop(id, 'the job started again');
    const controller = new AbortController();
    this.running.set(id, controller);
    const what = `ask ${job.data.askId}: synthesis`;
    let handled = false;
    try {
      await this.synthesis.synthesize(job.data, {
        attempt,
        signal: controller.signal,
        failed: (err, end) => {
          handled = true;
          return this.failedAttempt(job, what, err, end);
        },
      });
    } catch (err) {
      // A failure before the run claimed the ask (Redis unreachable): logged the same way, nothing to end.
      if (!handled) await this.failedAttempt(job, what, err, async () => undefined);
      throw err;
    } finally {
      if (this.running.get(id) === controller) this.running.delete(id);
    }
  }

  private stop(jobId: string, why: string): void {
    const controller = this.running.get(jobId);
    if (!controller) return;
    this.running.delete(jobId);
    this.logger.warn(`ask ${jobId}: stopping its run: ${why}`);
    controller.abort(new Error(why));
  }
}
