import type { RetrievedItem, SynthesizeJobData } from '@ask/ask-contracts';
import { isAskError, llmNotConfigured } from '@ask/ask-errors';
import { ambientCredentialsAllowed, type AppConfig } from '@ask/config';
import { assertFits, DEFAULT_MAX_TOKENS, DEFAULT_SYSTEM_PROMPT } from '@ask/context-budget';
import {
  type ChatProvider,
  createChatProvider,
  egressPolicyFor,
  LocalChatProvider,
  LocalSemanticEmbeddingProvider,
  type ProviderCredentials,
} from '@ask/llm-providers';
import { type ModelRef, resolveModel } from '@ask/model-catalog';
import type { Project } from '@ask/persistence';
import { countOnce, selectTokenCounter, sharedCountCache, type TokenCounter } from '@ask/token-counting';
import type { Logger } from '@nestjs/common';
import { CALIBRATION_READ } from '../planning-memory';
import { relevancePolicy, standInRelevance } from '../relevance-policy';
import { type Run, sessionGone, type SynthesisDeps, type Turn } from './turn';

/**
 * The load stage: the session's pairs and their summaries, the project with its remembered windows,
 * its model's calibration records and its credentials (two round trips), the resolved model and
 * window, the token counter, the provider, the counted history and the recalled memory.
 * @returns `answered` when the session already holds this ask's pair (a re-run of a finished ask:
 *   the stored answer is the truth, never a second paid call).
 * @throws AskError 404 when the session is gone, 412 `llm_not_configured` without LLM settings or when
 *   the provider cannot be instantiated, 413 `context_overflow` when the stored settings leave no room
 *   for a question in the window (`assertFits`).
 */
export async function loadTurn(
  deps: Pick<SynthesisDeps, 'projects' | 'sessions' | 'memory' | 'conversation' | 'config' | 'logger'>,
  data: SynthesizeJobData,
  run: Run,
): Promise<Turn | 'answered'> {
  // A session deleted before this run: the ask ends with one 404, before any upstream call. Its
  // pairs and their summaries come in the same round trip as the check.
  const session = await deps.sessions.historyWithTurnSummaries(data.projectId, data.sessionId);
  if (!session) throw sessionGone(data.sessionId);
  if (session.pairs.some((p) => p.askId === data.askId)) return 'answered';
  // The project, its remembered windows and its model's calibration records (its own and the model-wide prior) in one round trip.
  const found = await deps.projects.findForSynthesis(data.projectId, CALIBRATION_READ);
  const project = found?.project;
  if (!found || !project?.llmSettings) throw llmNotConfigured();
  const llm = project.llmSettings;
  const ref: ModelRef = { provider: llm.provider, model: llm.model, baseUrl: llm.baseUrl };
  const resolved = resolveModel(ref, { contextWindow: llm.contextWindow, maxContextTokens: llm.maxContextTokens });
  // A smaller window the provider disclosed for this project's model earlier.
  const { model, remembered } = await deps.memory.withRememberedWindow(project.id, resolved, found.windows);
  const choice = selectTokenCounter(ref, model.tokenizer);
  const maxTokens = llm.maxTokens ?? project.maxTokens ?? DEFAULT_MAX_TOKENS;
  // Settings refused at PATCH can still be stored from before, or a catalog change can shrink the
  // window under them: a typed 413 with the figures, never a RangeError retried into a 500.
  const planning = await deps.memory.planning(choice, model, project.id, found);
  const lowestMargin = planning.scripted?.lowestMarginPercent();
  assertFits(model.model, model.window, maxTokens, choice.exactPlan, lowestMargin);
  // Each text of this request is tokenised once, however often it is re-planned or stored; an exact
  // counter also goes through the process-wide count cache, so texts counted on earlier asks (the
  // system prompt, the turns the local stand-in recounts) are not tokenised again.
  const counter = countOnce(planning.scripted ? planning.counter : sharedCountCache(planning.counter));
  const provider = chatProviderFor(project, counter, found.credentials, deps.config, deps.logger, data.items);
  const counted = await deps.memory.history(data.sessionId, planning, session.pairs);
  const recalled = deps.conversation
    ? await deps.conversation.load(project, data.sessionId, counted, planning, session.turnSummaries)
    : undefined;
  const history = recalled?.history ?? counted;
  return {
    data,
    run,
    project,
    model,
    choice,
    planning,
    counter,
    provider,
    history,
    memory: recalled?.memory,
    maxTokens,
    lowestMargin,
    remembered,
    session,
    planInput: {
      model,
      counter,
      exact: choice.exactPlan,
      ...(planning.scripted ? { safetyMargin: planning.scripted.safetyMargin.bind(planning.scripted) } : {}),
      maxTokens,
      systemPrompt: project.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
      question: data.question,
      history,
      items: data.items,
      maxHistoryMessages: project.maxHistoryMessages,
      memory: recalled?.memory,
      relevance: relevancePolicy(project),
    },
  };
}

/**
 * The project's chat provider: the local stand-in (answers from the retrieved items, counting with
 * `counter`, abstaining when the retrieval's relevance judgement on `items` says nothing relevant was
 * found: `standInRelevance`), or the configured provider through the operator's egress policy.
 * @throws AskError 412 from the factory naming a missing field, or `llm_not_configured` when the
 *   provider failed to instantiate (its error name logged).
 */
export function chatProviderFor(
  project: Project,
  counter: TokenCounter,
  credentialsOf: () => ProviderCredentials | null,
  config: AppConfig,
  logger: Pick<Logger, 'warn'>,
  items: ReadonlyArray<Pick<RetrievedItem, 'score' | 'legs'>> = [],
): ChatProvider {
  const llm = project.llmSettings!;
  if (llm.provider === 'local') {
    return new LocalChatProvider({
      counter,
      chunkDelayMs: config.LOCAL_LLM_CHUNK_DELAY_MS,
      relevance: standInRelevance(project, items),
      // A project embedded semantically gets its answer sentences picked by meaning, not shared words.
      ...(project.embeddingSettings?.provider === 'local-semantic'
        ? { sentenceEmbedder: new LocalSemanticEmbeddingProvider() }
        : {}),
    });
  }
  const credentials = credentialsOf() ?? {};
  try {
    return createChatProvider(llm, credentials, {
      egress: egressPolicyFor(config),
      ambientCredentials: ambientCredentialsAllowed(config, project.id),
    });
  } catch (err) {
    // The factory's own 412 names the missing field; anything else is a provider that failed to instantiate.
    if (isAskError(err)) throw err;
    logger.warn(`project ${project.id}: provider ${llm.provider} failed to instantiate: ${(err as Error).name}`);
    throw llmNotConfigured(`provider ${llm.provider} could not be instantiated`);
  }
}
