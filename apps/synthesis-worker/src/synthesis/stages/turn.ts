import { Logger } from '@nestjs/common';
import type { SynthesizeJobData } from '@ask/ask-contracts';
import { notFound } from '@ask/ask-errors';
import type { AppConfig } from '@ask/config';
import type { TurnPlanInput } from '@ask/context-budget';
import { type AskEventStream, FencedPublishError, type RunClaim } from '@ask/event-stream';
import type { ChatProvider, UpstreamFailure } from '@ask/llm-providers';
import type { ResolvedModel } from '@ask/model-catalog';
import {
  type HistoryPair,
  type LearnedWindowsRepository,
  NO_CALL_RECORDS,
  type Project,
  type ProjectsRepository,
  type ProviderCallsRepository,
  type SessionsRepository,
  type SummariesRepository,
  type TurnSummary,
  type UsageRepository,
} from '@ask/persistence';
import type { CounterChoice, TokenCounter } from '@ask/token-counting';
import { ConversationMemory, type MemoryInput, type RememberedTurn } from '../../memory/conversation-memory';
import type { SummaryProducer } from '../../memory/summary.producer';
import type { SummaryService } from '../../memory/summary.service';
import { CallLedger } from '../call-ledger';
import { type Planning, PlanningMemory } from '../planning-memory';

/** What a provider disclosed when it refused a request as too large (tokens). */
export type Overflow = Extract<UpstreamFailure, { kind: 'overflow' }>;

/** The run's fencing claim and the worker's lock-lost signal. */
export interface Run {
  claim: RunClaim;
  lockLost?: AbortSignal;
}

/**
 * What the stages of one synthesis use, built once by `SynthesisService`: the repositories and
 * streams they read and write, and the logger their lines go to. Each stage takes the part it needs.
 */
export interface SynthesisDeps {
  projects: ProjectsRepository;
  sessions: SessionsRepository;
  events: AskEventStream;
  config: AppConfig;
  /** Calibration records, remembered windows and cached counts. */
  memory: PlanningMemory;
  /** Every upstream call's row in `provider_calls`. */
  ledger: CallLedger;
  /** Stored summaries read into the plan (absent: trimming only). */
  conversation?: ConversationMemory;
  summaryQueue?: SummaryProducer;
  summaryService?: SummaryService;
  logger: Logger;
}

/** What {@link synthesisDeps} builds the stages' dependencies from (the `SynthesisService` constructor's arguments). */
export interface SynthesisParts {
  projects: ProjectsRepository;
  sessions: SessionsRepository;
  usage: UsageRepository;
  windows: LearnedWindowsRepository;
  events: AskEventStream;
  config: AppConfig;
  /** Without it, upstream calls get no row in `provider_calls`. */
  calls?: ProviderCallsRepository;
  /** With it, stored summaries are read into the plan (conversation memory). */
  summaries?: SummariesRepository;
  summaryQueue?: SummaryProducer;
  summaryService?: SummaryService;
  logger?: Logger;
}

/** The stages' dependencies: planning memory over the usage and window repositories, the call ledger priced with `ASK_PRICE_OVERRIDES`. */
export function synthesisDeps(parts: SynthesisParts): SynthesisDeps {
  return {
    projects: parts.projects,
    sessions: parts.sessions,
    events: parts.events,
    config: parts.config,
    memory: new PlanningMemory(parts.usage, parts.windows, parts.sessions),
    ledger: new CallLedger(parts.calls ?? NO_CALL_RECORDS, parts.config.ASK_PRICE_OVERRIDES),
    ...(parts.summaries ? { conversation: new ConversationMemory(parts.summaries) } : {}),
    summaryQueue: parts.summaryQueue,
    summaryService: parts.summaryService,
    logger: parts.logger ?? new Logger('SynthesisService'),
  };
}

/** One turn as loaded ({@link loadTurn}): what every later stage reads. */
export interface Turn {
  data: SynthesizeJobData;
  run: Run;
  project: Project;
  model: ResolvedModel;
  choice: CounterChoice;
  planning: Planning;
  /** The planning counter, counting each text once (`countOnce`, over the shared cache when exact). */
  counter: TokenCounter;
  provider: ChatProvider;
  /** Earlier pairs with their counts, and their summaries when memory is on. */
  history: RememberedTurn[];
  /** The memory the plan uses, when conversation memory is wired. */
  memory?: MemoryInput;
  maxTokens: number;
  /**
   * The smallest safety margin (percent of the window) any prompt of the project can be planned with
   * (`ScriptCalibratedCounter.lowestMarginPercent`, from the calibration read at load); absent for an
   * exact counter. Computed once: the load check and the re-plan's check use the same figure.
   */
  lowestMargin?: number;
  /** The window the provider disclosed earlier, when it lowered the plan's window. */
  remembered?: number;
  /** The session as read at load: its pairs (oldest first) and their stored summaries. */
  session: { pairs: HistoryPair[]; turnSummaries: Map<string, TurnSummary> };
  /** What every plan of this turn is sized from (`planTurn`). */
  planInput: TurnPlanInput<HistoryPair>;
}

/** 404 for an ask whose session was deleted while it ran. */
export function sessionGone(sessionId: string) {
  return notFound(`session ${sessionId} was deleted while the ask was running`);
}

/** @throws FencedPublishError when the run lost its lock, another run claimed the ask, or it ended. */
export async function assertCurrent(events: AskEventStream, askId: string, run: Run): Promise<void> {
  if (run.lockLost?.aborted || !(await events.isCurrent(run.claim))) throw new FencedPublishError(askId, 'superseded');
}
