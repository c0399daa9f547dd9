import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  effectiveMemory,
  EXTRACTIVE_SUMMARISER,
  SESSION_SUMMARY_FACTOR,
  type SummariseJobData,
} from '@ask/ask-contracts';
import { cutToTokens, type ExtractiveSource, joinClauses, userFacts } from '@ask/context-budget';
import { ambientCredentialsAllowed, APP_CONFIG, type AppConfig } from '@ask/config';
import { createChatProvider, egressPolicyFor, type ProviderCredentials } from '@ask/llm-providers';
import { resolveModel } from '@ask/model-catalog';
import {
  type HistoryPair,
  LearnedWindowsRepository,
  type Project,
  ProjectsRepository,
  ProviderCallsRepository,
  type SessionSummaryRow,
  SessionsRepository,
  SummariesRepository,
  type SummaryCall,
  type SummaryCallOutcome,
  type TurnSummary,
  UsageRepository,
} from '@ask/persistence';
import { selectTokenCounter, sharedCountCache } from '@ask/token-counting';
import { CALIBRATION_READ, PlanningMemory, type Planning, storedPairTokens } from '../synthesis/planning-memory';
import { summaryCounts } from './summary-counts';
import { ExtractiveSummariser, ProviderSummariser, type Summariser, SummariserError } from './summarisers';

/** The session summary reaches this many pairs past the newest evicted one, so the next ask (one pair more) finds it ahead of the tail. */
export const COMPACTION_LEAD = 2;
/**
 * Added to the extractive score of the question's sentences: what the user said (the facts they give,
 * what they ask) is kept before the answer's elaboration when both compete for the budget.
 */
export const QUESTION_BONUS = 3;
/** The smallest length budget of a pair's summary, in tokens. */
export const MIN_SUMMARY_TOKENS = 32;
/** A pair's summary may use at most this share of the pair's own tokens. */
export const SUMMARY_SHARE_OF_PAIR = 0.7;
/** After this many rolling updates the session summary is rebuilt from the original messages (drift guard). */
export const FULL_REBUILD_EVERY = 8;

/** How a summary job ended, per summary it tried to write (for logs and tests). */
export interface SummaryJobResult {
  turn: SummaryCallOutcome | 'exists' | 'skipped';
  session: SummaryCallOutcome | 'skipped';
}

/** Builds the summariser of a project (a seam for tests: a failing, slow or empty summariser). */
export type SummariserFactory = (project: Project, model: string, planning: Planning) => Promise<Summariser>;

/** Injection token of an optional {@link SummariserFactory} (absent in production). */
export const SUMMARISER_FACTORY = Symbol('SUMMARISER_FACTORY');

/**
 * One summary job, after the answer was stored and `done` published:
 *
 * 1. writes the summary of the stored pair (once: a retried job keeps the first), at most
 *    `summaryMaxTokens` and at most 70% of the pair's own tokens (floor {@link MIN_SUMMARY_TOKENS}),
 *    so that a summary always saves room;
 * 2. when the ask's plan names pairs to roll (`evictedUpTo`, `PromptPlan.evictedUpTo`: in both
 *    modes the pairs whose summaries no longer fit memory's share of the window, in `compaction`
 *    also every pair sent as a summary line) beyond what the session summary covers, moves the
 *    session summary forward: a rolling update (the previous summary plus
 *    the newly covered pairs' original text), rebuilt from every original pair it covers every
 *    {@link FULL_REBUILD_EVERY} updates (docs/ARCHITECTURE.md, "Conversation memory").
 *
 * A summary is committed only when the call succeeded and its text is not blank, cut to its length
 * budget (planning counter) when longer; otherwise nothing changes and the next ask plans without it. Every summariser call records
 * its own usage row (`summary_calls`). A session deleted meanwhile ends the job cleanly (outcome
 * `gone`): no row written, nothing thrown. Infrastructure errors (database) are thrown for BullMQ to
 * retry.
 */
@Injectable()
export class SummaryService {
  private readonly logger = new Logger(SummaryService.name);
  private readonly planningMemory: PlanningMemory;

  constructor(
    private readonly projects: ProjectsRepository,
    private readonly sessions: SessionsRepository,
    private readonly summaries: SummariesRepository,
    usage: UsageRepository,
    windows: LearnedWindowsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() private readonly calls?: ProviderCallsRepository,
    @Optional() @Inject(SUMMARISER_FACTORY) private readonly factory?: SummariserFactory,
  ) {
    this.planningMemory = new PlanningMemory(usage, windows, sessions);
  }

  /**
   * True when the project's pairs are summarised by the built-in extractive summariser (the `local`
   * stand-in, or `summaryModel: extractive`): no upstream call, so the synthesis worker runs the
   * summary itself right after `done` ({@link summarise} with what the run read) instead of
   * enqueueing an `ask-memory` job. False for a provider summariser (and with a test factory).
   */
  summarisesInline(project: Project): boolean {
    const llm = project.llmSettings;
    if (this.factory || !llm) return false;
    const { mode, summaryModel } = effectiveMemory(project.memorySettings);
    return mode !== 'off' && (llm.provider === 'local' || (summaryModel ?? llm.model) === EXTRACTIVE_SUMMARISER);
  }

  /**
   * Runs one summary job (the steps above). `known` is what the synthesis run of the same ask
   * already read, for the inline run after its `done`: the project, and the session's pairs (the
   * newly stored one included) with their pair summaries; without it (the `ask-memory` job) both are
   * read here, in two round trips (the project with its calibration records and credentials, then the
   * session).
   * @throws the infrastructure error (database) for BullMQ to retry; a summariser's own failure is an
   *   outcome, never thrown.
   */
  async summarise(data: SummariseJobData, known?: KnownSession): Promise<SummaryJobResult> {
    const skipped: SummaryJobResult = { turn: 'skipped', session: 'skipped' };
    const found = known ? null : await this.projects.findForSynthesis(data.projectId, CALIBRATION_READ);
    const project = known ? known.project : found?.project;
    if (!project?.llmSettings) return skipped;
    const settings = effectiveMemory(project.memorySettings);
    if (settings.mode === 'off') return skipped;
    // The session's check, its pairs and their summaries in one round trip.
    const stored = known ?? (await this.sessions.historyWithTurnSummaries(project.id, data.sessionId));
    if (!stored) return { turn: 'gone', session: 'skipped' };
    const history = stored.pairs;
    const index = history.findIndex((m) => m.id === data.messageId);
    if (index < 0) return { turn: 'gone', session: 'skipped' };

    const llm = project.llmSettings;
    const model = resolveModel(
      { provider: llm.provider, model: llm.model, baseUrl: llm.baseUrl },
      { contextWindow: llm.contextWindow, maxContextTokens: llm.maxContextTokens },
    );
    const choice = selectTokenCounter(
      { provider: llm.provider, model: llm.model, baseUrl: llm.baseUrl },
      model.tokenizer,
    );
    // Read with the project by the job; read now by the inline run (this ask's usage record is in it).
    const planned = await this.planningMemory.planning(choice, model, project.id, found ?? undefined);
    // An exact counter through the process-wide count cache: the pair was just counted by its ask.
    const planning: Planning = planned.scripted ? planned : { ...planned, counter: sharedCountCache(planned.counter) };
    const summaryModel = settings.summaryModel ?? llm.model;
    let summariser: Summariser;
    try {
      summariser = await this.summariser(project, summaryModel, planning, found?.credentials);
    } catch (err) {
      // A provider that cannot be instantiated (missing key, refused endpoint): nothing is summarised.
      this.logger.warn(
        `session ${data.sessionId}: summariser ${llm.provider}/${summaryModel} unavailable: ${(err as Error).name}`,
      );
      await this.summaries.recordCall({
        projectId: project.id,
        sessionId: data.sessionId,
        messageId: data.messageId,
        kind: 'turn',
        provider: llm.provider,
        model: summaryModel,
        promptTokens: null,
        completionTokens: null,
        cacheReadTokens: null,
        outcome: 'failed',
      });
      return { turn: 'failed', session: 'skipped' };
    }
    const context = { project, planning, summariser, sessionId: data.sessionId, askId: data.askId };

    const existing = stored.turnSummaries;
    let turn: SummaryJobResult['turn'] = 'exists';
    if (!existing.has(data.messageId)) {
      const message = history[index];
      const budget = pairSummaryBudget(
        storedPairTokens(planning, message),
        message.question,
        settings.summaryMaxTokens,
        (t) => planning.counter.countText(t),
      );
      turn = await this.write(
        context,
        'turn',
        data.messageId,
        [
          { label: 'Q', text: message.question, bonus: QUESTION_BONUS, user: true },
          { label: 'A', text: message.answer },
        ],
        budget,
        // The summary and its call's usage row in one statement.
        (text, counts, call) =>
          this.summaries.saveTurnSummary(
            {
              messageId: message.id,
              text,
              tokenCounts: counts,
              provider: summariser.provider,
              model: summariser.model,
            },
            call,
          ),
      );
    }
    // Both memory modes: the plan names the pairs to roll (in per-turn only those whose lines no longer fit).
    if (data.evictedUpTo === null) return { turn, session: 'skipped' };
    const session = await this.compact(
      context,
      history,
      existing,
      data.evictedUpTo,
      settings.summaryMaxTokens * SESSION_SUMMARY_FACTOR,
    );
    return { turn, session };
  }

  /** Moves the session summary forward when the ask's plan evicted pairs it does not cover yet. */
  private async compact(
    context: Context,
    history: HistoryPair[],
    turnSummaries: ReadonlyMap<string, TurnSummary>,
    evictedUpTo: string,
    maxTokens: number,
  ): Promise<SummaryJobResult['session']> {
    const evicted = history.findIndex((m) => m.id === evictedUpTo);
    if (evicted < 0) return 'skipped';
    // Never the newest pair (it is always sent verbatim or summarised on its own).
    const target = Math.min(evicted + COMPACTION_LEAD, history.length - 2);
    const previous = await this.summaries.sessionSummary(context.sessionId);
    const covered = previous ? history.findIndex((m) => m.id === previous.coversUpTo) : -1;
    if (target < 0 || target <= covered) return 'skipped';
    const full = !previous || covered < 0 || previous.rollingUpdates + 1 >= FULL_REBUILD_EVERY;
    // An extractive summary copies whole sentences of its pair (it cannot bend a fact), so the session
    // summary starts from it; a provider's summary is not summarised again (drift): the pair itself is.
    const extractive = (m: HistoryPair) => {
      const summary = turnSummaries.get(m.id);
      return summary?.model === EXTRACTIVE_SUMMARISER ? summary.text : undefined;
    };
    const turn = (m: HistoryPair, i: number) => sessionSources(m, i + 1, extractive(m));
    const sources: ExtractiveSource[] = full
      ? history.slice(0, target + 1).flatMap(turn)
      : [
          // What the previous session summary kept already won once; the user's statements in it keep their rank.
          { label: '', text: (previous as SessionSummaryRow).text, bonus: 1, user: true },
          ...history.slice(covered + 1, target + 1).flatMap((m, i) => turn(m, covered + 1 + i)),
        ];
    const rollingUpdates = full ? 0 : (previous as SessionSummaryRow).rollingUpdates + 1;
    return this.write(context, 'session', null, sources, maxTokens, async (text, counts, call) => {
      const saved = await this.summaries.saveSessionSummary({
        sessionId: context.sessionId,
        text,
        coversUpTo: history[target].id,
        coversTurns: target + 1,
        tokenCounts: counts,
        provider: context.summariser.provider,
        model: context.summariser.model,
        rollingUpdates,
      });
      await this.summaries.recordCall({ ...call, outcome: saved ? 'stored' : 'gone' });
      return saved;
    });
  }

  /**
   * One summariser call: commits the text with `save` only when the call succeeded and the text is
   * not blank, cut to `maxTokens` of the planning counter (`cutToTokens`) when it is longer; records
   * the call's usage row either way (`save`
   * records it when it is called: outcome `stored` when it wrote the text, `gone` when not).
   */
  private async write(
    context: Context,
    kind: 'turn' | 'session',
    messageId: string | null,
    sources: ExtractiveSource[],
    maxTokens: number,
    save: (
      text: string,
      counts: ReturnType<typeof summaryCounts>,
      call: Omit<SummaryCall, 'outcome'>,
    ) => Promise<boolean>,
  ): Promise<SummaryCallOutcome> {
    const { summariser, planning, project, sessionId } = context;
    let outcome: SummaryCallOutcome;
    let usage: { promptTokens: number | null; completionTokens: number | null; cacheReadTokens: number | null } = {
      promptTokens: null,
      completionTokens: null,
      cacheReadTokens: null,
    };
    const callRow = (): Omit<SummaryCall, 'outcome'> => ({
      projectId: project.id,
      sessionId,
      messageId,
      kind,
      provider: summariser.provider,
      model: summariser.model,
      promptTokens: usage.promptTokens,
      completionTokens: usage.completionTokens,
      cacheReadTokens: usage.cacheReadTokens,
    });
    let recorded = false;
    const startedAt = new Date();
    // A provider call is also a row of the project's call ledger (provider_calls), purpose `summary`,
    // written ahead so a call is paid once: no summariser call without its row, even if the worker dies.
    const ledger = this.calls && summariser instanceof ProviderSummariser ? this.calls : undefined;
    const scope = {
      projectId: project.id,
      sessionId,
      askId: context.askId,
      operation: 'chat' as const,
      purpose: 'summary' as const,
      provider: summariser.provider,
      requestedModel: summariser.model,
      startedAt,
    };
    const row = ledger ? await ledger.open(scope) : undefined;
    try {
      const result = await summariser.summarise(
        sources,
        maxTokens,
        AbortSignal.timeout(this.config.MEMORY_SUMMARY_TIMEOUT_MS),
      );
      usage = result;
      // Over its budget under the planning counter (an estimate that over-counts the script, or a
      // provider that wrote past it): cut to the budget, never refused for an estimate.
      const text = cutToTokens(result.text.trim(), maxTokens, (t) => planning.counter.countText(t));
      if (text === '') outcome = 'empty';
      else {
        recorded = true;
        outcome = (await save(text, summaryCounts(planning, text), callRow())) ? 'stored' : 'gone';
      }
    } catch (err) {
      if (!(err instanceof SummariserError)) {
        // Not the provider's answer (a store failed after the call): the call still ends in its row.
        if (ledger && row !== undefined)
          await ledger
            .close(row, { ...scope, durationMs: Date.now() - startedAt.getTime(), errorCode: 'internal_error' })
            .catch(() => undefined);
        throw err;
      }
      outcome = err.outcome;
      this.logger.warn(
        `session ${sessionId}: ${kind} summary by ${summariser.provider}/${summariser.model} ${err.outcome}: ${err.message}`,
      );
    }
    // A session deleted meanwhile: its usage still happened (summary_calls has no foreign key to it).
    if (!recorded) await this.summaries.recordCall({ ...callRow(), outcome });
    if (ledger && row !== undefined) {
      await ledger.close(row, {
        ...scope,
        inputTokens: usage.promptTokens,
        outputTokens: usage.completionTokens,
        cacheReadTokens: usage.cacheReadTokens,
        durationMs: Date.now() - startedAt.getTime(),
        errorCode:
          outcome === 'failed' || outcome === 'timeout' || outcome === 'overflow' ? `summary_${outcome}` : null,
      });
    }
    if (outcome !== 'stored' && outcome !== 'gone')
      this.logger.warn(`session ${sessionId}: ${kind} summary not stored (${outcome})`);
    return outcome;
  }

  private async summariser(
    project: Project,
    model: string,
    planning: Planning,
    credentialsOf?: () => ProviderCredentials | null,
  ): Promise<Summariser> {
    if (this.factory) return this.factory(project, model, planning);
    const llm = project.llmSettings!;
    if (llm.provider === 'local' || model === EXTRACTIVE_SUMMARISER) return new ExtractiveSummariser(planning.counter);
    const credentials = (credentialsOf ? credentialsOf() : await this.projects.getCredentials(project.id)) ?? {};
    const chat = createChatProvider({ ...llm, model }, credentials, {
      egress: egressPolicyFor(this.config),
      ambientCredentials: ambientCredentialsAllowed(this.config, project.id),
    });
    return new ProviderSummariser(chat, llm.provider, model);
  }
}

/**
 * The length budget of a pair's summary, tokens of the planning counter: a summary must save room, so
 * at most 70% of the pair ({@link SUMMARY_SHARE_OF_PAIR}; floor {@link MIN_SUMMARY_TOKENS}: room for one
 * sentence and its label), but never less than the user's facts of the question need (`Q:` and each of
 * its {@link userFacts} with a space, as the extractive summariser counts them), so that a short pair does not lose its fact to the share (bench/memory: `很好，谢谢你的回答
 * 我们这项工作的预算是146,495元。` answered `很高兴可以帮助你。` kept only the answer under 32 tokens);
 * at most `maxTokens` (the setting) in every case.
 */
export function pairSummaryBudget(
  pairTokens: number,
  question: string,
  maxTokens: number,
  countText: (text: string) => number,
): number {
  // Counted as the extractive summariser counts what it keeps: the label once, each sentence and its space.
  const facts = userFacts(question);
  const factTokens = facts.length ? facts.reduce((sum, f) => sum + countText(f) + 1, countText('Q:') + 1) : 0;
  return Math.min(maxTokens, Math.max(MIN_SUMMARY_TOKENS, Math.floor(pairTokens * SUMMARY_SHARE_OF_PAIR), factTokens));
}

/** What an inline run hands {@link SummaryService.summarise}: read by the ask's synthesis run. */
export interface KnownSession {
  project: Project;
  /** The session's pairs, oldest first, the one to summarise included. */
  pairs: HistoryPair[];
  /** Their stored pair summaries, by message id. */
  turnSummaries: Map<string, TurnSummary>;
}

interface Context {
  project: Project;
  planning: Planning;
  summariser: Summariser;
  sessionId: string;
  askId: string;
}

/**
 * The sources one pair gives the session summary (so the user's facts outlive their pairs): its stored per-turn summary when
 * there is one (its sentences already won once: bonus 1), so the session summary carries forward
 * what the summaries it replaces held, else the pair itself. The user's words (`Q:` part, or the
 * question) are a `user` source: their statements about themselves outrank figures and code.
 * @param turn the pair's 1-based position in the session (its label `Turn n`).
 */
export function sessionSources(
  pair: Pick<HistoryPair, 'question' | 'answer'>,
  turn: number,
  summary?: string,
): ExtractiveSource[] {
  const label = `Turn ${turn}`;
  if (summary === undefined) {
    return [
      { label, text: pair.question, user: true },
      { label: '', text: pair.answer },
    ];
  }
  // The user's facts the summary had no room for (or that a provider's summary reworded) come from
  // the question itself: the session summary never loses a fact because a pair's summary did.
  const missing = (held: string) => userFacts(pair.question).filter((f) => !held.includes(f));
  // The extractive summariser writes `Q: … A: …`; a provider's summary is one text.
  const parts = /^(?:Q: ([\s\S]*?))?(?:(?:^|\s+)A: ([\s\S]*))?$/.exec(summary.trim());
  if (!parts || (parts[1] === undefined && parts[2] === undefined)) {
    const facts = missing(summary);
    return [
      ...(facts.length ? [{ label, text: joinClauses(facts), user: true }] : []),
      { label: facts.length ? '' : label, text: summary, bonus: 1 },
    ];
  }
  const user = joinClauses([parts[1] ?? '', ...missing(summary)].filter(Boolean));
  return [
    ...(user ? [{ label, text: user, bonus: 1, user: true }] : []),
    ...(parts[2] ? [{ label: user ? '' : label, text: parts[2], bonus: 1 }] : []),
  ];
}
