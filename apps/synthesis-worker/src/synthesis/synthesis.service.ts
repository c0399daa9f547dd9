import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { SynthesizeJobData } from '@ask/ask-contracts';
import { type AskError, isAskError, toErrorEvent } from '@ask/ask-errors';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { AskEventStream, FencedPublishError, replayStoredAnswer } from '@ask/event-stream';
import { askDurationSeconds, asksTotal } from '@ask/observability';
import {
  LearnedWindowsRepository,
  ProjectsRepository,
  ProviderCallsRepository,
  SessionsRepository,
  SummariesRepository,
  UsageRepository,
} from '@ask/persistence';
import type { CallScope } from './call-ledger';
import { SummaryProducer } from '../memory/summary.producer';
import { SummaryService } from '../memory/summary.service';
import { publishBudget } from './stages/budget';
import { checkReportedUsage } from './stages/learn';
import { loadTurn } from './stages/load';
import { firstPlan, replanAfterOverflow } from './stages/plan';
import { rememberTurn } from './stages/remember';
import { storeAnswer } from './stages/store';
import { type Answered, recoverFromOverflow, streamAnswer } from './stages/stream';
import { type Run, type SynthesisDeps, synthesisDeps, type Turn } from './stages/turn';
import { learnFromOverflow } from './stages/learn';
import { verifyWithCountEndpoint } from './stages/verify';

/** What the worker knows about the attempt it runs (BullMQ retries after crashes or infra faults). */
export interface AttemptInfo {
  attempt: number;
  /**
   * How the worker handles an infrastructure failure of this attempt (`JobProcessor.failedAttempt`):
   * it logs it and, on the job's last attempt, calls `end` with the typed 500 (with its error id),
   * which this run publishes as the ask's `error` under its claim; it always rethrows.
   */
  failed?: (err: unknown, end: (error: AskError) => Promise<unknown>) => Promise<never>;
  /** Fired when the worker lost the job's lock: the run stops (nothing more published or called upstream). */
  signal?: AbortSignal;
}

/** How a run ended, for the processor: `fenced` means another run owns the ask, or the ask already ended. */
export type RunOutcome = 'finished' | 'fenced';

/**
 * One synthesis: size the prompt against the model's window (cached counts, pair trimming, RAG
 * shrink), call the provider with streaming, store the question/answer pair once (keyed by the ask
 * id), and emit `budget`, `delta`…, then `done`, or one `error` with the typed body.
 *
 * Typed failures end the ask with an `error` event and return; infrastructure failures are thrown so
 * BullMQ retries the job (a later attempt emits `reset` if text was already streamed).
 *
 * One run per ask: the run claims the ask first ({@link AskEventStream.claim}) and every event it
 * publishes carries that claim, so once a later run has claimed the ask (a stalled job re-run on
 * another worker) or the ask has ended, the older run's next publish is refused and it stops. The
 * provider call is aborted then, or at once when the worker reports the job's lock lost (`signal`).
 */
@Injectable()
export class SynthesisService {
  private readonly logger = new Logger(SynthesisService.name);
  /** What the stages use (`stages/`), built once. */
  private readonly deps: SynthesisDeps;

  /**
   * `summaries` and `summaryQueue` wire conversation memory: stored summaries are read into the plan,
   * and a summary job is enqueued after each `done`. Without them the worker plans with trimming
   * only. With `summaryService`, a pair whose summariser is the built-in extractive one is summarised
   * in this run right after `done` instead of in a job (`rememberTurn`). Without `calls`, upstream
   * calls get no row in `provider_calls`.
   */
  constructor(
    projects: ProjectsRepository,
    sessions: SessionsRepository,
    usage: UsageRepository,
    private readonly events: AskEventStream,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    windows: LearnedWindowsRepository,
    @Optional() calls?: ProviderCallsRepository,
    @Optional() summaries?: SummariesRepository,
    @Optional() summaryQueue?: SummaryProducer,
    @Optional() summaryService?: SummaryService,
  ) {
    this.deps = synthesisDeps({
      projects,
      sessions,
      usage,
      windows,
      events,
      config,
      calls,
      summaries,
      summaryQueue,
      summaryService,
      logger: this.logger,
    });
  }

  /**
   * Runs one attempt of the ask. Resolves `fenced` when the run was stopped because it is no longer
   * the ask's current run (or the ask already ended), `finished` otherwise.
   * @throws the infrastructure error (BullMQ retries the job), after `failed` (on the last attempt the
   *   ask first ends with its typed 500 `internal_error`).
   */
  async synthesize(data: SynthesizeJobData, { attempt, failed, signal: lockLost }: AttemptInfo): Promise<RunOutcome> {
    const claim = await this.events.claim(data.askId);
    if (!claim) {
      // The ask's Redis keys are gone (expired, or lost with Redis): the reconciler re-opens or ends it.
      this.logger.warn(`ask ${data.askId}: no meta in Redis, nothing to run`);
      return 'fenced';
    }
    const deadline = Date.parse(data.acceptedAt) + this.config.ASK_DEADLINE_MS;
    // A timer cleared when the ask ends (AbortSignal.timeout would hold each job's signal until the
    // deadline, which under load keeps thousands alive); same TimeoutError reason as AbortSignal.timeout.
    const deadlineController = new AbortController();
    const timer = setTimeout(
      () => deadlineController.abort(new DOMException('the ask passed its deadline', 'TimeoutError')),
      Math.max(1, deadline - Date.now()),
    );
    const signal = lockLost ? AbortSignal.any([deadlineController.signal, lockLost]) : deadlineController.signal;
    const run: Run = { claim, lockLost };
    try {
      const rerun = attempt > 1 || claim.run > 1;
      if (rerun && (await this.finishIfAlreadyStored(data, run))) return 'finished';
      if (rerun) await this.resetIfStreamed(data.askId, attempt, run);
      try {
        await this.run(data, signal, run);
      } catch (err) {
        if (err instanceof FencedPublishError || !isAskError(err)) throw err;
        await this.events.publish(data.askId, 'error', toErrorEvent(err), claim);
        asksTotal.inc({ outcome: err.code });
        askDurationSeconds.observe((Date.now() - Date.parse(data.acceptedAt)) / 1000);
      }
      return 'finished';
    } catch (err) {
      if (err instanceof FencedPublishError) {
        this.logger.warn(
          `ask ${data.askId}: run ${claim.run} stopped (${err.reason}${lockLost?.aborted ? ', job lock lost' : ''})`,
        );
        return 'fenced';
      }
      if (failed) {
        await failed(err, (error) =>
          this.events.publish(data.askId, 'error', toErrorEvent(error), claim).catch((fenced) => {
            if (!(fenced instanceof FencedPublishError)) throw fenced;
          }),
        );
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The job's stages: load → plan → verify → stream (with the one overflow branch) → store → learn →
   * `done` → remember. Typed failures are thrown as AskErrors (the caller ends the ask with them).
   */
  private async run(data: SynthesizeJobData, signal: AbortSignal, run: Run): Promise<void> {
    const turn = await loadTurn(this.deps, data, run);
    // Already answered (a re-enqueued or re-claimed run of a finished ask, whatever its attempt
    // number): the stored answer is the truth, never a second paid call.
    if (turn === 'answered') return void (await this.finishIfAlreadyStored(data, run));
    const answered = await this.answer(turn, signal);
    const { stored, sources } = await storeAnswer(this.deps, turn, answered);
    const { result, sized } = answered;
    const warning = await checkReportedUsage(this.deps, turn, sized, result.promptTokens);
    const usage = { promptTokens: result.promptTokens, completionTokens: result.completionTokens };
    const done = { messageId: stored.message.id, usage, sources, ...(warning ? { warning } : {}) };
    await this.events.publish(data.askId, 'done', done, run.claim);
    asksTotal.inc({ outcome: 'done' });
    askDurationSeconds.observe((Date.now() - Date.parse(data.acceptedAt)) / 1000);
    if (turn.memory && turn.memory.mode !== 'off') await rememberTurn(this.deps, turn, stored.message, sized.plan);
  }

  /**
   * Plan, verify, stream: the first plan (or the bare request), checked at the provider's count
   * endpoint, its `budget` published, then the answer streamed; an overflow takes the one re-plan
   * branch (`recoverFromOverflow`).
   */
  private async answer(turn: Turn, signal: AbortSignal): Promise<Answered> {
    const call = (purpose: CallScope['purpose']): CallScope => ({
      projectId: turn.project.id,
      sessionId: turn.data.sessionId,
      askId: turn.data.askId,
      purpose,
    });
    const { sized: planned, bare } = firstPlan(turn.planInput);
    const verified = await verifyWithCountEndpoint(this.deps, turn, planned, signal, call('count'));
    const replanned = verified.overflow !== undefined;
    if (verified.overflow) await learnFromOverflow(this.deps, turn, planned, verified.overflow);
    const sized = verified.overflow ? replanAfterOverflow(turn, planned, verified.overflow) : verified.sized;
    const budget = await publishBudget(this.events, turn, sized);
    const result = await streamAnswer(this.deps, turn, sized, signal, call('answer'));
    if (!result.overflow) return { sized, budget, result };
    return recoverFromOverflow(this.deps, turn, { sized, overflow: result.overflow, bare, replanned }, signal, call);
  }

  /**
   * A retried job whose pair is already stored ends with `done` (no second pair, no second answer,
   * no provider call): `reset`, the stored answer, `done` ({@link replayStoredAnswer}).
   * @returns false when nothing is stored for the ask (the run goes on).
   */
  private async finishIfAlreadyStored(data: SynthesizeJobData, run: Run): Promise<boolean> {
    const events = await this.events.readAll(data.askId);
    if (events.some((e) => e.type === 'done' || e.type === 'error')) return true;
    const stored = await this.deps.sessions.findByAsk(data.projectId, data.askId);
    if (!stored) return false;
    await replayStoredAnswer(this.events, data.askId, stored, run.claim);
    return true;
  }

  /** Before a retried attempt streams, tells clients to discard text an earlier attempt streamed. */
  private async resetIfStreamed(askId: string, attempt: number, run: Run): Promise<void> {
    const events = await this.events.readAll(askId);
    const lastReset = events.map((e) => e.type).lastIndexOf('reset');
    if (events.slice(lastReset + 1).some((e) => e.type === 'delta' || e.type === 'budget')) {
      await this.events.publish(askId, 'reset', { attempt, reason: 'the worker restarted this answer' }, run.claim);
    }
  }
}
