import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { SynthesizeJobData } from '@ask/ask-contracts';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { AskEventStream } from '@ask/event-stream';
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
import { claimRun, finishIfAlreadyStored, resumeRun } from './stages/claim';
import { runDeadline } from './stages/deadline';
import { endWithError, type FailedAttempt, publishDone, stopOrFail } from './stages/end';
import { checkReportedUsage, learnFromOverflow } from './stages/learn';
import { loadTurn } from './stages/load';
import { firstPlan, replanAfterOverflow } from './stages/plan';
import { rememberTurn } from './stages/remember';
import { storeAnswer } from './stages/store';
import { type Answered, recoverFromOverflow, streamAnswer } from './stages/stream';
import { callScope, type Run, type SynthesisDeps, synthesisDeps, type Turn } from './stages/turn';
import { verifyWithCountEndpoint } from './stages/verify';

/** What the worker knows about the attempt it runs (BullMQ retries after crashes or infra faults). */
export interface AttemptInfo {
  attempt: number;
  /**
   * How the worker handles an infrastructure failure of this attempt (`JobProcessor.failedAttempt`):
   * it logs it and, on the job's last attempt, calls `end` with the typed 500 (with its error id),
   * which this run publishes as the ask's `error` under its claim; it always rethrows.
   */
  failed?: FailedAttempt;
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
    events: AskEventStream,
    @Inject(APP_CONFIG) config: AppConfig,
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
   * Runs one attempt of the ask: claim → (a re-run: resume) → the stages under the deadline → the
   * typed failure as the ask's `error`. Resolves `fenced` when the run was stopped because it is no
   * longer the ask's current run (or the ask already ended), `finished` otherwise.
   * @throws the infrastructure error (BullMQ retries the job), after `failed` (on the last attempt the
   *   ask first ends with its typed 500 `internal_error`).
   */
  async synthesize(data: SynthesizeJobData, { attempt, failed, signal: lockLost }: AttemptInfo): Promise<RunOutcome> {
    const run = await claimRun(this.deps, data.askId, lockLost);
    if (!run) return 'fenced';
    const deadline = runDeadline(data.acceptedAt, this.deps.config.ASK_DEADLINE_MS, lockLost);
    try {
      if ((await resumeRun(this.deps, data, run, attempt)) === 'finished') return 'finished';
      await this.run(data, deadline.signal, run).catch((err) => endWithError(this.deps, data, run, err));
      return 'finished';
    } catch (err) {
      return await stopOrFail(this.deps, data.askId, run, err, failed);
    } finally {
      deadline.clear();
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
    if (turn === 'answered') return void (await finishIfAlreadyStored(this.deps, data, run));
    const answered = await this.answer(turn, signal);
    const { stored, sources } = await storeAnswer(this.deps, turn, answered);
    const warning = await checkReportedUsage(this.deps, turn, answered.sized, answered.result.promptTokens);
    await publishDone(this.deps, turn, answered, { messageId: stored.message.id, sources }, warning);
    if (turn.memory && turn.memory.mode !== 'off')
      await rememberTurn(this.deps, turn, stored.message, answered.sized.plan);
  }

  /**
   * Plan, verify, stream: the first plan (or the bare request), checked at the provider's count
   * endpoint, its `budget` published, then the answer streamed; an overflow takes the one re-plan
   * branch (`recoverFromOverflow`).
   */
  private async answer(turn: Turn, signal: AbortSignal): Promise<Answered> {
    const call = (purpose: CallScope['purpose']) => callScope(turn, purpose);
    const { sized: planned, bare } = firstPlan(turn.planInput);
    const verified = await verifyWithCountEndpoint(this.deps, turn, planned, signal, call('count'));
    const replanned = verified.overflow !== undefined;
    if (verified.overflow) await learnFromOverflow(this.deps, turn, planned, verified.overflow);
    const sized = verified.overflow ? replanAfterOverflow(turn, planned, verified.overflow) : verified.sized;
    const budget = await publishBudget(this.deps.events, turn, sized);
    const result = await streamAnswer(this.deps, turn, sized, signal, call('answer'));
    if (!result.overflow) return { sized, budget, result };
    return recoverFromOverflow(this.deps, turn, { sized, overflow: result.overflow, bare, replanned }, signal, call);
  }
}
