import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  type BudgetEvent,
  type BudgetMemory,
  citedSources,
  promptInputLimit,
  type SynthesizeJobData,
} from '@ask/ask-contracts';
import {
  AskErrorCode,
  contextOverflow,
  internalError,
  isAskError,
  llmNotConfigured,
  notFound,
  questionOverflow,
  settingsOverflow,
  toErrorEvent,
} from '@ask/ask-errors';
import {
  budgetShortfall,
  DEFAULT_MAX_TOKENS,
  DEFAULT_SYSTEM_PROMPT,
  type PromptPlan,
  sizeBareRequest,
  sizePrompt,
  type SizedPrompt,
} from '@ask/context-budget';
import { ambientCredentialsAllowed, APP_CONFIG, type AppConfig } from '@ask/config';
import { AskEventStream, FencedPublishError, replayStoredAnswer, type RunClaim } from '@ask/event-stream';
import {
  type ChatProvider,
  type ChatRequest,
  classifyUpstreamError,
  type ProviderCredentials,
  countWithRetry,
  createChatProvider,
  localAbstainThreshold,
  LocalSemanticEmbeddingProvider,
  detectSilentTruncation,
  egressPolicyFor,
  LocalChatProvider,
  type RetryNotice,
  streamWithRetry,
  toAskError,
  type UpstreamFailure,
} from '@ask/llm-providers';
import { type ModelRef, modelMetricLabel, resolveModel, type ResolvedModel } from '@ask/model-catalog';
import { relevancePolicy } from './relevance-policy';
import {
  askDurationSeconds,
  asksTotal,
  budgetFillRatio,
  countingErrorRatio,
  countingFaultsTotal,
  inSpan,
  promptTokensPlanned,
  turnsDroppedTotal,
} from '@ask/observability';
import {
  LearnedWindowsRepository,
  NO_CALL_RECORDS,
  type Project,
  ProjectsRepository,
  ProviderCallsRepository,
  SessionNotFoundError,
  SessionsRepository,
  SummariesRepository,
  UsageRepository,
  withTransientRetry,
} from '@ask/persistence';
import {
  countOnce,
  type CounterChoice,
  selectTokenCounter,
  sharedCountCache,
  type TokenCounter,
} from '@ask/token-counting';
import { CALIBRATION_READ, type CountedTurn, factorsOf, type Planning, PlanningMemory } from './planning-memory';
import { DeltaCoalescer } from './delta-coalescer';
import { CallLedger, type CallScope } from './call-ledger';
import { ConversationMemory } from '../memory/conversation-memory';
import { SummaryProducer } from '../memory/summary.producer';
import { type KnownSession, SummaryService } from '../memory/summary.service';

/** Reported prompt tokens above our estimate by more than this factor are logged as a counting fault. */
const COUNTING_FAULT_RATIO = 1.15;

/** What a provider disclosed when it refused a request as too large (tokens). */
type Overflow = Extract<UpstreamFailure, { kind: 'overflow' }>;

/**
 * `marginPercent`: the smallest margin the project's calibrated estimate can plan with
 * (`ScriptCalibratedCounter.lowestMarginPercent`); absent, the seed's.
 * @throws AskError 413 `context_overflow` (`settingsOverflow`) when `maxTokens` + reserve + margin
 *   leave no token of `window` for the question.
 */
function assertFits(model: string, window: number, maxTokens: number, exact: boolean, marginPercent?: number): void {
  const shortfall = budgetShortfall({ window, maxTokens, exact, marginPercent });
  if (shortfall) throw settingsOverflow({ model, ...shortfall });
}

/** What the worker knows about the attempt it runs (BullMQ retries after crashes or infra faults). */
export interface AttemptInfo {
  attempt: number;
  /** True on the job's last attempt: an infrastructure failure then ends the ask with a typed 500. */
  last?: boolean;
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
  private readonly memory: PlanningMemory;
  /** Every upstream call's row in `provider_calls` (none when constructed without the repository). */
  private readonly ledger: CallLedger;
  private readonly conversation?: ConversationMemory;

  /**
   * `summaries` and `summaryQueue` wire conversation memory (issue 16): stored summaries are read
   * into the plan, and a summary job is enqueued after each `done`. Without them the worker plans
   * with trimming only. With `summaryService`, a pair whose summariser is the built-in extractive
   * one is summarised in this run right after `done` instead of in a job (see `summarise`).
   */
  constructor(
    private readonly projects: ProjectsRepository,
    private readonly sessions: SessionsRepository,
    usage: UsageRepository,
    private readonly events: AskEventStream,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    windows: LearnedWindowsRepository,
    @Optional() calls?: ProviderCallsRepository,
    @Optional() summaries?: SummariesRepository,
    @Optional() private readonly summaryQueue?: SummaryProducer,
    @Optional() private readonly summaryService?: SummaryService,
  ) {
    this.memory = new PlanningMemory(usage, windows, sessions);
    this.ledger = new CallLedger(calls ?? NO_CALL_RECORDS, config.ASK_PRICE_OVERRIDES);
    if (summaries) this.conversation = new ConversationMemory(summaries);
  }

  /**
   * Runs one attempt of the ask. Resolves `fenced` when the run was stopped because it is no longer
   * the ask's current run (or the ask already ended), `finished` otherwise.
   * @throws the infrastructure error (BullMQ retries the job); on the last attempt the ask first ends
   *   with a typed 500 `internal_error`.
   */
  async synthesize(
    data: SynthesizeJobData,
    { attempt, last = false, signal: lockLost }: AttemptInfo,
  ): Promise<RunOutcome> {
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
      if (last) {
        await this.events.publish(data.askId, 'error', toErrorEvent(internalError()), claim).catch((fenced) => {
          if (!(fenced instanceof FencedPublishError)) throw fenced;
        });
      }
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  private async run(data: SynthesizeJobData, signal: AbortSignal, run: Run): Promise<void> {
    // A session deleted before this run: the ask ends with one 404, before any upstream call. Its
    // pairs and their summaries come in the same round trip as the check.
    const session = await this.sessions.historyWithTurnSummaries(data.projectId, data.sessionId);
    if (!session) throw sessionGone(data.sessionId);
    const { pairs, turnSummaries } = session;
    // Already answered (a re-enqueued or re-claimed run of a finished ask, whatever its attempt
    // number): the stored answer is the truth, never a second paid call. The read above carries it.
    if (pairs.some((p) => p.askId === data.askId)) {
      await this.finishIfAlreadyStored(data, run);
      return;
    }
    // The project, its remembered windows and its model's calibration records (its own and the model-wide prior) in one round trip.
    const found = await this.projects.findForSynthesis(data.projectId, CALIBRATION_READ);
    const project = found?.project;
    if (!found || !project?.llmSettings) throw llmNotConfigured();
    const llm = project.llmSettings;
    const ref: ModelRef = { provider: llm.provider, model: llm.model, baseUrl: llm.baseUrl };
    const resolved = resolveModel(ref, { contextWindow: llm.contextWindow, maxContextTokens: llm.maxContextTokens });
    // A smaller window the provider disclosed for this project's model earlier (issue 12 item 2).
    const { model, remembered } = await this.memory.withRememberedWindow(project.id, resolved, found.windows);
    const choice = selectTokenCounter(ref, model.tokenizer);
    const maxTokens = llm.maxTokens ?? project.maxTokens ?? DEFAULT_MAX_TOKENS;
    // Settings refused at PATCH can still be stored from before, or a catalog change can shrink the
    // window under them: a typed 413 with the figures, never a RangeError retried into a 500.
    const planning = await this.memory.planning(choice, model, project.id, found);
    const lowestMargin = planning.scripted?.lowestMarginPercent();
    assertFits(model.model, model.window, maxTokens, choice.exactPlan, lowestMargin);
    // Each text of this request is tokenised once, however often it is re-planned or stored; an exact
    // counter also goes through the process-wide count cache, so texts counted on earlier asks (the
    // system prompt, the turns the local stand-in recounts) are not tokenised again.
    const counter = countOnce(planning.scripted ? planning.counter : sharedCountCache(planning.counter));
    const provider = this.provider(project, counter, found.credentials);
    const counted = await this.memory.history(data.sessionId, planning, pairs);
    const recalled = this.conversation
      ? await this.conversation.load(project, data.sessionId, counted, planning, turnSummaries)
      : undefined;
    const history = recalled?.history ?? counted;
    const relevance = relevancePolicy(project);

    // Each planning is a span (tracing on) with the plan's figures, never its text.
    const size = (windowOverride?: number, scale?: number): SizedPrompt =>
      inSpan('ask.plan', {}, (span) => {
        const sized = plan(windowOverride, scale);
        span?.setAttributes(planAttributes(sized));
        return sized;
      });
    const plan = (windowOverride?: number, scale?: number): SizedPrompt =>
      sizePrompt({
        model,
        counter,
        exact: choice.exactPlan,
        scale,
        ...(planning.scripted ? { safetyMargin: planning.scripted.safetyMargin.bind(planning.scripted) } : {}),
        maxTokens,
        systemPrompt: project.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
        question: data.question,
        history,
        items: data.items,
        maxHistoryMessages: project.maxHistoryMessages,
        windowOverride,
        memory: recalled?.memory,
        relevance,
      });
    const ctx: TurnContext = {
      askId: data.askId,
      projectId: project.id,
      question: data.question,
      model,
      choice,
      planning,
      history,
      maxTokens,
      remembered,
      run,
    };
    // Never resent as-is after an overflow: re-planned once with what the provider disclosed.
    const replan = async (sized: SizedPrompt, overflow: Overflow): Promise<SizedPrompt> => {
      await this.learnFromOverflow(ctx, sized, overflow);
      const next = replanFigures(sized, overflow);
      assertFits(model.model, next.window, maxTokens, choice.exactPlan, lowestMargin);
      return size(next.window, next.scale);
    };

    let sized: SizedPrompt;
    // True when the plan found no room for the question with one item and the bare request goes.
    let bare = false;
    try {
      sized = size();
    } catch (err) {
      // The approximate count may be several times the provider's (an uncalibrated script): before a
      // 413, the bare request (system prompt + question + max_tokens) goes, and the provider decides.
      if (choice.exactPlan || !isAskError(err) || err.code !== AskErrorCode.ContextOverflow) throw err;
      sized = sizeBareRequest({
        model,
        counter,
        exact: false,
        maxTokens,
        systemPrompt: project.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
        question: data.question,
        history,
        items: data.items,
        ...(planning.scripted ? { safetyMargin: planning.scripted.safetyMargin.bind(planning.scripted) } : {}),
      });
      bare = true;
    }
    let replanned = false;
    const scope = (purpose: CallScope['purpose']): CallScope => ({
      projectId: project.id,
      sessionId: data.sessionId,
      askId: data.askId,
      purpose,
    });
    const verified = await this.verifyWithCountEndpoint(ctx, sized, provider, size, signal, scope('count'));
    if (verified.overflow) {
      sized = await replan(sized, verified.overflow);
      replanned = true;
    } else sized = verified.sized;
    let budget = await this.publishBudget(ctx, sized);

    const request: ChatRequest = { model: model.model, messages: sized.messages, maxTokens, signal };
    let result = await this.stream(
      scope('answer'),
      provider,
      { ...request, messages: sized.messages },
      model,
      sized,
      run,
    );
    if (result.overflow && bare) {
      // Even the bare request is over the window in the provider's own tokens: the question alone is too large.
      await this.learnFromOverflow(ctx, sized, result.overflow);
      throw questionOverflowOf(model.model, sized, maxTokens, result.overflow);
    }
    if (result.overflow && !replanned) {
      sized = await replan(sized, result.overflow);
      budget = await this.publishBudget(ctx, sized);
      result = await this.stream(
        scope('overflow_retry'),
        provider,
        { ...request, messages: sized.messages },
        model,
        sized,
        run,
      );
    }
    if (result.overflow) {
      await this.learnFromOverflow(ctx, sized, result.overflow);
      throw contextOverflow({ model: model.model, window: sized.window, ...sized.figures });
    }

    const answer = result.text;
    // One entry per page (its best chunk first), not one per chunk.
    const sources = citedSources(sized.keptItems);
    // A run that is no longer current stores nothing (the current run stores its own answer).
    await this.assertCurrent(data.askId, run);
    const stored = await inSpan('ask.store', {}, () =>
      this.appendOrSessionGone({
        projectId: data.projectId,
        sessionId: data.sessionId,
        askId: data.askId,
        question: data.question,
        answer,
        tokenCounts: this.memory.countsToStore({ ...planning, counter }, data.question, answer),
        promptTokens: result.promptTokens,
        completionTokens: result.completionTokens,
        provider: model.provider,
        model: model.model,
        // What the live view showed for this turn, kept for a reopened session (issue 17 item 6).
        budget,
        sources,
      }),
    );
    if (!stored.inserted && stored.message.answer !== answer) {
      // Another run stored its answer first: what the client keeps must be the stored answer.
      await this.events.publish(
        data.askId,
        'reset',
        { attempt: run.claim.run, reason: 'another run stored its answer first; resending it' },
        run.claim,
      );
      await this.events.publish(data.askId, 'delta', { text: stored.message.answer }, run.claim);
    }
    const warning = await this.checkReportedUsage(ctx, sized, result.promptTokens);
    await this.events.publish(
      data.askId,
      'done',
      {
        messageId: stored.message.id,
        usage: { promptTokens: result.promptTokens, completionTokens: result.completionTokens },
        sources,
        ...(warning ? { warning } : {}),
      },
      run.claim,
    );
    asksTotal.inc({ outcome: 'done' });
    askDurationSeconds.observe((Date.now() - Date.parse(data.acceptedAt)) / 1000);
    if (recalled && recalled.memory.mode !== 'off') {
      const pairs = session.pairs.some((m) => m.id === stored.message.id)
        ? session.pairs
        : [...session.pairs, stored.message];
      await this.summarise(data, stored.message.id, sized.plan, { project, pairs, turnSummaries });
    }
  }

  /**
   * After `done`, the summary of the stored pair (never delays or fails the reply). With the
   * built-in extractive summariser (no upstream call: `SummaryService.summarisesInline`) it runs
   * here, through the same `SummaryService.summarise` as the `ask-memory` job, on what this run
   * read (no second read of the project and the session); a provider summariser, or an inline run
   * that hit an infrastructure error, gets the job. A lost enqueue only means that pair has no
   * summary, and the planner then treats it as trimming does.
   */
  private async summarise(
    data: SynthesizeJobData,
    messageId: string,
    plan: PromptPlan,
    known: KnownSession,
  ): Promise<void> {
    const job = {
      projectId: data.projectId,
      sessionId: data.sessionId,
      messageId,
      askId: data.askId,
      // The planner names the pairs the session summary must take over (`PromptPlan.evictedUpTo`).
      evictedUpTo: plan.evictedUpTo,
    };
    if (this.summaryService?.summarisesInline(known.project)) {
      try {
        const result = await this.summaryService.summarise(job, known);
        this.logger.debug(`ask ${data.askId}: turn summary ${result.turn}, session summary ${result.session}`);
        return;
      } catch (err) {
        this.logger.warn(`ask ${data.askId}: inline summary failed, enqueued instead: ${(err as Error).message}`);
      }
    }
    if (!this.summaryQueue) return;
    try {
      await this.summaryQueue.enqueue(job);
    } catch (err) {
      this.logger.warn(`ask ${data.askId}: summary job not enqueued: ${(err as Error).message}`);
    }
  }

  /** Streams one call, publishing its text as coalesced deltas (`DeltaCoalescer`). Returns the text and usage, or the overflow to re-budget. */
  private async stream(
    call: CallScope,
    provider: ChatProvider,
    request: ChatRequest,
    model: ResolvedModel,
    sized: SizedPrompt,
    run: Run,
  ): Promise<{ text: string; promptTokens: number | null; completionTokens: number | null; overflow?: Overflow }> {
    let text = '';
    let promptTokens: number | null = null;
    let completionTokens: number | null = null;
    const askId = call.askId;
    const meter = await this.ledger.start({
      ...call,
      operation: 'chat',
      provider: model.provider,
      requestedModel: model.model,
      plannedTokens: sized.plan.used,
    });
    // Provider chunks are coalesced into fewer deltas (the first at once, then every
    // SYNTHESIS_DELTA_INTERVAL_MS, 25 by default, or 1,024 characters).
    const deltas = new DeltaCoalescer(
      async (piece) => void (await this.events.publish(askId, 'delta', { text: piece }, run.claim)),
      undefined,
      this.config.SYNTHESIS_DELTA_INTERVAL_MS,
    );
    try {
      // Each attempt streamWithRetry makes is an upstream call of its own: a failed one is its own row.
      const onRetry = ({ failure, delayMs }: RetryNotice) => meter.retried(toAskError(failure).code, delayMs);
      for await (const chunk of streamWithRetry(provider, request, { signal: request.signal, onRetry })) {
        meter.firstChunk();
        if (chunk.type === 'delta') {
          if (!chunk.text) continue;
          text += chunk.text;
          // Refused once another run owns the ask: leaving the loop aborts the provider call.
          await deltas.push(chunk.text);
        } else {
          meter.usage(chunk);
          promptTokens = chunk.promptTokens;
          completionTokens = chunk.completionTokens;
        }
      }
      await deltas.flush();
    } catch (err) {
      deltas.discard();
      // A run stopped (another run owns the ask, or the job's lock was lost): the call ended without an answer.
      if (err instanceof FencedPublishError) {
        await meter.finish(null, 'aborted');
        throw err;
      }
      // The worker lost the job's lock: the call was aborted because this run must stop, not a timeout.
      if (run.lockLost?.aborted) {
        await meter.finish(null, 'aborted');
        throw new FencedPublishError(askId, 'superseded');
      }
      const failure = classifyUpstreamError(err, model.provider);
      if (failure.kind === 'overflow' && text === '') {
        await meter.finish(AskErrorCode.ContextOverflow);
        return { text, promptTokens, completionTokens, overflow: failure };
      }
      this.logger.warn(
        `ask ${askId}: ${model.provider}/${model.model} failed (${failure.kind}) after ${sized.plan.used} planned tokens`,
      );
      const error =
        failure.kind === 'overflow'
          ? contextOverflow({ model: model.model, window: sized.window, ...sized.figures })
          : toAskError(failure);
      await meter.finish(error.code);
      throw error;
    }
    await meter.finish(null);
    return { text, promptTokens, completionTokens };
  }

  /**
   * With a remote exact counter (Anthropic count_tokens, Vertex countTokens), counts the assembled
   * request at the provider; when it would not fit, re-plans once with the observed ratio (the
   * provider's count ÷ ours) as the scale. The count call is classified and retried like a chat call
   * (`countWithRetry`): a rate limit is retried within bounds and then ends the ask with 502, a
   * timeout with 504; an overflow the endpoint reports goes back to the caller's one re-plan.
   */
  private async verifyWithCountEndpoint(
    ctx: TurnContext,
    sized: SizedPrompt,
    provider: ChatProvider,
    size: (windowOverride?: number, scale?: number) => SizedPrompt,
    signal: AbortSignal,
    call: CallScope,
  ): Promise<{ sized: SizedPrompt; overflow?: Overflow }> {
    if (!ctx.choice.remote || !provider.countRequestTokens) return { sized };
    let exactTokens: number;
    const meter = await this.ledger.start({
      ...call,
      operation: 'count_tokens',
      provider: ctx.model.provider,
      requestedModel: ctx.model.model,
      plannedTokens: sized.plan.used,
    });
    try {
      const onRetry = ({ failure, delayMs }: RetryNotice) => meter.retried(toAskError(failure).code, delayMs);
      exactTokens = await countWithRetry(
        provider,
        { model: ctx.model.model, messages: sized.messages, maxTokens: ctx.maxTokens, signal },
        { signal, onRetry },
      );
    } catch (err) {
      if (ctx.run.lockLost?.aborted) {
        await meter.finish(null, 'aborted');
        throw new FencedPublishError(ctx.askId, 'superseded');
      }
      const failure = classifyUpstreamError(err, ctx.model.provider);
      this.logger.warn(
        `ask ${ctx.askId}: ${ctx.model.provider}/${ctx.model.model} count endpoint failed (${failure.kind})`,
      );
      if (failure.kind === 'overflow') {
        await meter.finish(AskErrorCode.ContextOverflow);
        return { sized, overflow: failure };
      }
      const error = toAskError(failure, { cause: err });
      await meter.finish(error.code);
      throw error;
    }
    await meter.finish(null);
    if (exactTokens + ctx.maxTokens <= sized.window - sized.plan.margin) return { sized };
    const scale = Math.max(1, exactTokens / Math.max(1, sized.plan.used)) * sized.scale;
    return { sized: size(sized.window, scale) };
  }

  /**
   * What an overflow teaches: a window smaller than the one planned against is remembered for the
   * project's model, and the disclosed prompt size is a calibration record (per-script estimate only).
   * (OpenAI's per-minute "Request too large" is no overflow: `classifyUpstreamError` makes it a fatal 429.)
   */
  private async learnFromOverflow(ctx: TurnContext, sized: SizedPrompt, overflow: Overflow): Promise<void> {
    await this.memory.rememberWindow(ctx.projectId, ctx.model, sized.window, overflow.limit);
    if (overflow.promptTokens !== undefined) {
      await this.memory.record(
        ctx.projectId,
        ctx.model.model,
        ctx.planning,
        { sized, question: ctx.question, history: ctx.history },
        overflow.promptTokens,
        'overflow',
      );
    }
  }

  /** Publishes the turn's `budget` event and returns it (stored with the answer). */
  private async publishBudget(ctx: TurnContext, sized: SizedPrompt): Promise<BudgetEvent> {
    const { plan } = sized;
    const { model, choice, planning } = ctx;
    const budget: BudgetEvent = {
      provider: model.provider,
      model: model.model,
      window: sized.window,
      maxTokens: ctx.maxTokens,
      reserve: plan.reserve,
      margin: plan.margin,
      marginPercent: sized.margin.percent,
      marginBasis: sized.margin.basis,
      ...(sized.margin.spread !== undefined ? { marginSpread: sized.margin.spread } : {}),
      counter: choice.exactPlan ? 'exact' : 'approximate',
      counterId: planning.counter.id,
      calibration: Number((planning.scripted?.maxApplied ?? 1).toFixed(4)),
      calibrationByScript: factorsOf(planning.calibration),
      ...(ctx.remembered !== undefined ? { rememberedWindow: ctx.remembered } : {}),
      ...(sized.scale > 1 ? { observedRatio: Number(sized.scale.toFixed(4)) } : {}),
      available: plan.available,
      used: plan.used,
      turnsKept: plan.turnsKept,
      turnsDropped: plan.turnsDropped,
      contextKept: plan.contextKept,
      contextDropped: plan.contextDropped,
      keptTurnIds: plan.keptTurnIds,
      items: plan.items,
      relevanceFloor: plan.relevanceFloor,
      memory: budgetMemory(
        plan,
        ctx.history.map((t) => t.message.id),
      ),
    };
    await this.events.publish(ctx.askId, 'budget', budget, ctx.run.claim);
    // The catalog family or `other`: the model id is the tenant's, unbounded (issue 25 item 5).
    const label = { model: modelMetricLabel(model) };
    promptTokensPlanned.observe(label, plan.used);
    // Against the prompt's own limit (window − max_tokens − margin): `used` includes the system prompt,
    // which the reserve holds, so `available` (net of the reserve) would read over 1 on a full plan.
    const inputLimit = promptInputLimit(budget);
    if (inputLimit > 0) budgetFillRatio.observe(label, plan.used / inputLimit);
    if (plan.turnsDropped) turnsDroppedTotal.inc(label, plan.turnsDropped);
    return budget;
  }

  /**
   * Compares the provider's reported prompt tokens with what we planned. With the per-script estimate
   * it records the floor estimate of what was sent and its script class (calibration learns from it;
   * a report far above is evidence of drift, kept). A report far above our plan is also counted as a
   * counting fault (logged with the model id, counted in metrics); for Ollama a report far below is
   * flagged as silent truncation (the returned warning).
   */
  private async checkReportedUsage(
    ctx: TurnContext,
    sized: SizedPrompt,
    reported: number | null,
  ): Promise<string | undefined> {
    if (reported === null || reported <= 0) return undefined;
    const { model, planning } = ctx;
    const counter = planning.counter;
    // The plan already counted what was sent (cached measures): no second pass over the prompt here.
    const planned = sized.plan.used;
    await this.memory.record(
      ctx.projectId,
      model.model,
      planning,
      { sized, question: ctx.question, history: ctx.history },
      reported,
      'usage',
    );
    if (planned > 0) countingErrorRatio.observe({ model: modelMetricLabel(model) }, reported / planned);
    if (reported > planned * COUNTING_FAULT_RATIO) {
      countingFaultsTotal.inc({ model: modelMetricLabel(model) });
      this.logger.warn(
        `counting fault: model=${model.model} counter=${counter.id} estimated=${planned} reported=${reported}`,
      );
    }
    if (model.provider === 'ollama' && detectSilentTruncation(planned, reported)) {
      this.logger.warn(`silent truncation suspected: model=${model.model} sent=${planned} reported=${reported}`);
      return `the provider reported ${reported} prompt tokens for ${planned} sent: it may have truncated the prompt silently`;
    }
    return undefined;
  }

  private provider(
    project: Project,
    counter: TokenCounter,
    credentialsOf: () => ProviderCredentials | null,
  ): ChatProvider {
    const llm = project.llmSettings!;
    if (llm.provider === 'local') {
      return new LocalChatProvider({
        counter,
        chunkDelayMs: this.config.LOCAL_LLM_CHUNK_DELAY_MS,
        abstainBelow: localAbstainThreshold(project.embeddingSettings?.model),
        // A project embedded semantically gets its answer sentences picked by meaning, not shared words.
        ...(project.embeddingSettings?.provider === 'local-semantic'
          ? { sentenceEmbedder: new LocalSemanticEmbeddingProvider() }
          : {}),
      });
    }
    const credentials = credentialsOf() ?? {};
    try {
      return createChatProvider(llm, credentials, {
        egress: egressPolicyFor(this.config),
        ambientCredentials: ambientCredentialsAllowed(this.config, project.id),
      });
    } catch (err) {
      // The factory's own 412 names the missing field; anything else is a provider that failed to instantiate.
      if (isAskError(err)) throw err;
      this.logger.warn(`project ${project.id}: provider ${llm.provider} failed to instantiate: ${(err as Error).name}`);
      throw llmNotConfigured(`provider ${llm.provider} could not be instantiated`);
    }
  }

  /**
   * A retried job whose pair is already stored ends with `done` (no second pair, no second answer,
   * no provider call): `reset`, the stored answer, `done` ({@link replayStoredAnswer}).
   * @returns false when nothing is stored for the ask (the run goes on).
   */
  private async finishIfAlreadyStored(data: SynthesizeJobData, run: Run): Promise<boolean> {
    const events = await this.events.readAll(data.askId);
    if (events.some((e) => e.type === 'done' || e.type === 'error')) return true;
    const stored = await this.sessions.findByAsk(data.projectId, data.askId);
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

  /** @throws FencedPublishError when the run lost its lock, another run claimed the ask, or it ended. */
  private async assertCurrent(askId: string, run: Run): Promise<void> {
    if (run.lockLost?.aborted || !(await this.events.isCurrent(run.claim)))
      throw new FencedPublishError(askId, 'superseded');
  }

  /**
   * Stores the pair; a session deleted meanwhile is a typed 404 (never retried: it will not come back).
   * The answer is paid for by now: a saturated or restarting database is waited out for about 3 s
   * (`withTransientRetry`) before the attempt fails, rather than failing it into a second paid call.
   */
  private async appendOrSessionGone(input: Parameters<SessionsRepository['appendMessage']>[0]) {
    try {
      return await withTransientRetry(() => this.sessions.appendMessage(input));
    } catch (err) {
      if (err instanceof SessionNotFoundError) throw sessionGone(input.sessionId);
      throw err;
    }
  }
}

/** What one turn's helpers share. */
interface TurnContext {
  askId: string;
  projectId: string;
  question: string;
  model: ResolvedModel;
  choice: CounterChoice;
  planning: Planning;
  history: CountedTurn[];
  maxTokens: number;
  /** The window the provider disclosed earlier, when it lowered the plan's window. */
  remembered?: number;
  run: Run;
}

/**
 * The window and scale of the one re-plan after an overflow (tokens; scale a factor ≥ 1):
 *
 * - the provider disclosed its prompt count: scale every count by (its count ÷ our planned count),
 *   on top of the scale already applied, so the retry is sized in the provider's own tokens;
 * - it disclosed a window (or a per-minute limit) below ours: plan against it;
 * - it disclosed neither anything smaller nor a count: 10% below the window.
 *
 * Never `window − 1` with the same counts: that resends the same request.
 */
export function replanFigures(
  sized: Pick<SizedPrompt, 'window' | 'scale' | 'plan'>,
  overflow: Pick<Overflow, 'limit' | 'promptTokens'>,
): { window: number; scale: number } {
  const limit =
    overflow.limit !== undefined && overflow.limit > 0 && overflow.limit < sized.window ? overflow.limit : undefined;
  const ratio =
    overflow.promptTokens !== undefined && sized.plan.used > 0 ? overflow.promptTokens / sized.plan.used : undefined;
  if (ratio !== undefined && ratio > 1) return { window: limit ?? sized.window, scale: sized.scale * ratio };
  if (limit !== undefined) return { window: limit, scale: sized.scale };
  return { window: Math.floor(sized.window * 0.9), scale: sized.scale };
}

/**
 * The `budget` event's memory figures: each list of the plan as ranges of 1-based turn positions
 * (`historyIds` is the session's pairs, oldest first).
 */
export function budgetMemory(plan: Pick<PromptPlan, 'memory'>, historyIds: readonly string[]): BudgetMemory {
  const position = new Map(historyIds.map((id, i) => [id, i + 1]));
  const ranges = (ids: readonly string[]): Array<[number, number]> => {
    const out: Array<[number, number]> = [];
    for (const n of ids
      .map((id) => position.get(id) ?? 0)
      .filter((n) => n > 0)
      .sort((a, b) => a - b)) {
      const last = out.at(-1);
      if (last && last[1] + 1 === n) last[1] = n;
      else out.push([n, n]);
    }
    return out;
  };
  const m = plan.memory;
  return {
    mode: m.mode,
    verbatimPairs: m.verbatimTurnIds.length,
    summarisedPairs: m.summarisedTurnIds.length,
    compactedPairs: m.compactedTurnIds.length,
    droppedPairs: m.droppedTurnIds.length,
    verbatim: ranges(m.verbatimTurnIds),
    summarised: ranges(m.summarisedTurnIds),
    compacted: ranges(m.compactedTurnIds),
    dropped: ranges(m.droppedTurnIds),
    sessionSummary: m.sessionSummaryTokens > 0,
    sessionSummaryTokens: m.sessionSummaryTokens,
    memoryTokens: m.memoryTokens,
  };
}

/**
 * The 413 of a bare request the provider refused: the question's size in the provider's tokens when
 * it disclosed the request's (its share of our count of the bare request), else our count.
 */
function questionOverflowOf(model: string, sized: SizedPrompt, maxTokens: number, overflow: Overflow) {
  const prompt = overflow.promptTokens;
  const question =
    prompt !== undefined && sized.plan.used > 0
      ? Math.round((prompt * sized.figures.question) / sized.plan.used)
      : sized.figures.question;
  return questionOverflow({
    model,
    window: sized.window,
    maxTokens,
    question,
    ...(prompt !== undefined ? { prompt } : {}),
  });
}

/** The run's fencing claim and the worker's lock-lost signal. */
interface Run {
  claim: RunClaim;
  lockLost?: AbortSignal;
}

/** 404 for an ask whose session was deleted while it ran. */
function sessionGone(sessionId: string) {
  return notFound(`session ${sessionId} was deleted while the ask was running`);
}

/** The span attributes of one planning: its figures in tokens (no prompt text). */
function planAttributes(sized: SizedPrompt): Record<string, number> {
  return {
    'ask.budget.window': sized.window,
    'ask.budget.used': sized.plan.used,
    'ask.budget.available': sized.plan.available,
    'ask.budget.turns_kept': sized.plan.turnsKept,
    'ask.budget.turns_dropped': sized.plan.turnsDropped,
    'ask.budget.context_kept': sized.plan.contextKept,
    'ask.budget.context_dropped': sized.plan.contextDropped,
  };
}
