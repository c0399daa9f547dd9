import { effectiveMemory, type MemoryMode } from '@ask/ask-contracts';
import type { Project, SummariesRepository, SummaryTokenCounts, TurnSummary } from '@ask/persistence';
import type { CountedTurn, Planning } from '../synthesis/planning-memory';
import { summaryCounts, summaryTokens } from './summary-counts';

/** An earlier turn with its stored summary (text and planning tokens), when there is one. */
export type RememberedTurn = CountedTurn & { summary?: { text: string; tokens: number } };

/** What `sizePrompt` gets for memory: the mode and the session summary, when one is stored. */
export interface MemoryInput {
  mode: MemoryMode;
  sessionSummary?: { text: string; tokens: number; coversUpTo: string };
}

/**
 * Reads what conversation memory stored for a session and hands it to the planner: each
 * pair's summary with its planning tokens, and the session summary. Counts cached under another
 * counter (a model switch) are counted once and cached. Mode `off` reads nothing.
 */
export class ConversationMemory {
  constructor(private readonly summaries: SummariesRepository) {}

  async load(
    project: Project,
    sessionId: string,
    history: CountedTurn[],
    planning: Planning,
    turnSummaries?: Map<string, TurnSummary>,
  ): Promise<{ history: RememberedTurn[]; memory: MemoryInput }> {
    const { mode } = effectiveMemory(project.memorySettings);
    if (mode === 'off') return { history, memory: { mode } };
    // Read with the session's pairs by the caller (`historyWithTurnSummaries`), or here.
    const stored = turnSummaries ?? (await this.summaries.turnSummaries(sessionId));
    const recount: Array<{ messageId: string; tokenCounts: SummaryTokenCounts }> = [];
    const remembered = history.map((turn): RememberedTurn => {
      const summary = stored.get(turn.message.id);
      if (!summary) return turn;
      let tokens = summaryTokens(planning, summary.tokenCounts);
      if (tokens === undefined) {
        const counts = summaryCounts(planning, summary.text);
        recount.push({ messageId: summary.messageId, tokenCounts: counts });
        tokens = summaryTokens(planning, counts) as number;
      }
      return { ...turn, summary: { text: summary.text, tokens } };
    });
    if (recount.length) await this.summaries.addTurnSummaryCounts(recount);
    // Per-turn too: its oldest lines roll into the session summary when they no longer fit.
    const session = await this.summaries.sessionSummary(sessionId);
    if (!session) return { history: remembered, memory: { mode } };
    let tokens = summaryTokens(planning, session.tokenCounts);
    if (tokens === undefined) {
      const counts = summaryCounts(planning, session.text);
      await this.summaries.addSessionSummaryCounts(sessionId, counts);
      tokens = summaryTokens(planning, counts) as number;
    }
    return {
      history: remembered,
      memory: { mode, sessionSummary: { text: session.text, tokens, coversUpTo: session.coversUpTo } },
    };
  }
}
