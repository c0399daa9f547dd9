import { InjectQueue } from '@nestjs/bullmq';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { JobState, Queue } from 'bullmq';
import {
  ASK_JOB_OPTIONS,
  type ErrorEvent,
  JobName,
  QueueName,
  type RetrieveJobData,
  TERMINAL_EVENTS,
} from '@ask/ask-contracts';
import { llmUpstream } from '@ask/ask-errors';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import {
  AskEventStream,
  type ContractQueue,
  contractQueue,
  enqueueJob,
  FencedPublishError,
  replayStoredAnswer,
} from '@ask/event-stream';
import { type AskRecord, AsksRepository, type OpenAsksBatch, SessionsRepository } from '@ask/persistence';

/** An ask younger than this is left alone: the gateway may still be writing its Redis keys (ms). */
export const RECONCILE_MIN_AGE_MS = 5_000;
/** Open asks checked per pass, oldest first (the rest wait for the next pass). */
const BATCH = 500;
/** Re-enqueues of one ask after Redis lost it; once more and it ends with a typed error. */
export const MAX_REQUEUES = 2;
/** Job states in which BullMQ will still run (or is running) a job. */
const LIVE: ReadonlySet<JobState | 'unknown'> = new Set([
  'active',
  'waiting',
  'delayed',
  'prioritized',
  'waiting-children',
]);

/** What one pass did. */
export interface ReconcileCounts {
  checked: number;
  /** Open rows whose stream holds its terminal event: recorded as `done` / `error`. */
  ended: number;
  /** Asks Redis lost (no live job, or no meta) that were enqueued again. */
  requeued: number;
  /**
   * Asks Redis lost whose answer was already stored: ended from the stored answer (`reset`, the
   * answer, `done`), no job enqueued and no provider called again.
   */
  replayed: number;
  /** Asks Redis lost past their deadline (or re-enqueued too often): ended with a typed 504. */
  failed: number;
}

/**
 * Reconciles the durable record of accepted asks (PostgreSQL `asks`, written by the gateway with the
 * 202) with Redis, every ASK_RECONCILE_INTERVAL_MS, so no accepted ask is silently lost:
 *
 * - an open ask whose stream holds its terminal event is recorded as ended;
 * - an open ask whose Redis state is gone but whose answer is stored (Redis lost it right after, or
 *   just before, `done`) ends from the stored answer: `reset`, the answer, `done`, recorded `done`;
 *   nothing is enqueued, no provider is called again (an ask is paid once);
 * - an open ask at least RECONCILE_MIN_AGE_MS old whose Redis state is gone (no meta hash, or neither
 *   job live: a Redis restart without persistence, a flush) is re-opened (meta, then `reset` so a
 *   client drops any text it had) and its retrieval job enqueued again, while its deadline has not
 *   passed and it was re-enqueued fewer than MAX_REQUEUES times; otherwise it ends with one typed
 *   504 `llm_upstream` event.
 *
 * So an ask lost at time t is running again, or has ended with a typed error, by t + 5 s +
 * ASK_RECONCILE_INTERVAL_MS (plus the pass's own time). Passes on several replicas never handle the
 * same ask at once (rows locked `FOR UPDATE SKIP LOCKED`).
 */
@Injectable()
export class AskReconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AskReconciler.name);
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly retrieval: ContractQueue<QueueName.AskRetrieval>;
  private readonly synthesis: ContractQueue<QueueName.AskSynthesis>;

  constructor(
    private readonly asks: AsksRepository,
    private readonly sessions: SessionsRepository,
    private readonly events: AskEventStream,
    @InjectQueue(QueueName.AskRetrieval) retrieval: Queue,
    @InjectQueue(QueueName.AskSynthesis) synthesis: Queue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.retrieval = contractQueue(QueueName.AskRetrieval, retrieval);
    this.synthesis = contractQueue(QueueName.AskSynthesis, synthesis);
  }

  onApplicationBootstrap(): void {
    this.schedule();
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(async () => {
      try {
        const counts = await this.pass();
        if (counts.requeued || counts.failed || counts.replayed)
          this.logger.warn(`reconciled asks lost from Redis: ${JSON.stringify(counts)}`);
      } catch (err) {
        // Redis or PostgreSQL away: the next pass tries again.
        this.logger.warn(`ask reconciliation failed: ${(err as Error).message}`);
      }
      this.schedule();
    }, this.config.ASK_RECONCILE_INTERVAL_MS);
    this.timer.unref();
  }

  /** One pass over the open asks accepted at least RECONCILE_MIN_AGE_MS before `now` (epoch ms). */
  async pass(now = Date.now()): Promise<ReconcileCounts> {
    return this.asks.reconcile(new Date(now - RECONCILE_MIN_AGE_MS), BATCH, async (batch) => {
      const counts: ReconcileCounts = { checked: batch.asks.length, ended: 0, requeued: 0, failed: 0, replayed: 0 };
      for (const ask of batch.asks) counts[await this.reconcile(ask, batch, now)] += 1;
      return counts;
    });
  }

  private async reconcile(
    ask: AskRecord,
    batch: OpenAsksBatch,
    now: number,
  ): Promise<'ended' | 'requeued' | 'failed' | 'replayed' | 'checked'> {
    const last = await this.events.lastEvent(ask.id);
    if (last && TERMINAL_EVENTS.has(last.type)) {
      await batch.finish(
        ask.id,
        last.type === 'done' ? 'done' : 'error',
        last.type === 'error' ? (last.data as ErrorEvent).code : undefined,
      );
      return 'ended';
    }
    const meta = await this.events.meta(ask.id);
    if (meta && (await this.live(ask.id))) return 'checked';

    // Lost: Redis no longer holds a job that will finish this ask.
    const acceptedAt = ask.acceptedAt.toISOString();
    if (!meta) await this.events.open(ask.id, { projectId: ask.projectId, sessionId: ask.sessionId, acceptedAt });
    // The stored answer is the truth: a finished ask is never run (nor paid for) again.
    const stored = await this.sessions.findByAsk(ask.projectId, ask.id);
    if (stored) {
      try {
        await replayStoredAnswer(this.events, ask.id, stored);
      } catch (err) {
        // It ended meanwhile (a worker's terminal event came first): the next pass records how.
        if (err instanceof FencedPublishError) return 'checked';
        throw err;
      }
      await batch.finish(ask.id, 'done');
      return 'replayed';
    }
    const deadline = ask.acceptedAt.getTime() + this.config.ASK_DEADLINE_MS;
    try {
      if (now < deadline && ask.requeues < MAX_REQUEUES) {
        await this.events.publish(ask.id, 'reset', {
          attempt: 0,
          reason: 'the ask was lost from Redis and runs again',
        });
        await this.removeFinishedJobs(ask.id);
        const data: RetrieveJobData = {
          askId: ask.id,
          projectId: ask.projectId,
          sessionId: ask.sessionId,
          question: ask.question,
          acceptedAt,
        };
        await enqueueJob(this.retrieval, JobName.Retrieve, data, { ...ASK_JOB_OPTIONS, jobId: ask.id });
        await batch.requeued(ask.id);
        return 'requeued';
      }
      const error = llmUpstream('the ask was lost from Redis and passed its deadline before it could run again', {
        timeout: true,
      }).toEvent();
      await this.events.publish(ask.id, 'error', error);
      await batch.finish(ask.id, 'error', error.code);
      return 'failed';
    } catch (err) {
      // It ended meanwhile (a worker's terminal event came first): the next pass records how.
      if (err instanceof FencedPublishError) return 'checked';
      throw err;
    }
  }

  /** True when either job of the ask is one BullMQ will still run. */
  private async live(askId: string): Promise<boolean> {
    const [retrieval, synthesis] = await Promise.all([
      this.retrieval.getJobState(askId),
      this.synthesis.getJobState(askId),
    ]);
    return LIVE.has(retrieval) || LIVE.has(synthesis);
  }

  /** A completed or failed job keeps its id, which would make the re-enqueue a no-op. */
  private async removeFinishedJobs(askId: string): Promise<void> {
    for (const queue of [this.retrieval, this.synthesis]) {
      const job = await queue.getJob(askId);
      if (job) await job.remove();
    }
  }
}
