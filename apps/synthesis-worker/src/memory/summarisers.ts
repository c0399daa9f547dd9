import { EXTRACTIVE_SUMMARISER } from '@ask/ask-contracts';
import { type ExtractiveSource, extractiveSummary } from '@ask/context-budget';
import {
  type ChatProvider,
  classifyUpstreamError,
  streamWithRetry,
  toAskError,
  type UpstreamFailure,
} from '@ask/llm-providers';
import type { ProviderId } from '@ask/model-catalog';
import type { TokenCounter } from '@ask/token-counting';

/** What one summariser call returned: the text and the usage the provider reported (null: not reported). */
export interface SummariserResult {
  text: string;
  promptTokens: number | null;
  completionTokens: number | null;
  /** Cache-read prompt tokens; null: the adapter does not report them. */
  cacheReadTokens: number | null;
}

/** Writes one summary. */
export interface Summariser {
  readonly provider: string;
  readonly model: string;
  /**
   * @param sources the texts to summarise, oldest first, each under its label.
   * @param maxTokens the summary's length budget, tokens of the planning counter.
   * @throws SummariserError when the call failed, timed out, or the window overflowed.
   */
  summarise(sources: readonly ExtractiveSource[], maxTokens: number, signal: AbortSignal): Promise<SummariserResult>;
}

/** A summariser call that failed; `outcome` is what the usage row records. */
export class SummariserError extends Error {
  constructor(
    readonly outcome: 'failed' | 'timeout' | 'overflow',
    message: string,
  ) {
    super(message);
    this.name = 'SummariserError';
  }
}

/**
 * The built-in summariser of the local stand-in (and of the `extractive` model): the most
 * informative sentences within the budget (`extractiveSummary`). No provider call: 0 tokens of usage.
 */
export class ExtractiveSummariser implements Summariser {
  readonly provider = 'local';
  readonly model = EXTRACTIVE_SUMMARISER;

  constructor(private readonly counter: TokenCounter) {}

  async summarise(sources: readonly ExtractiveSource[], maxTokens: number): Promise<SummariserResult> {
    return {
      text: extractiveSummary(sources, maxTokens, (t) => this.counter.countText(t)),
      promptTokens: 0,
      completionTokens: 0,
      cacheReadTokens: null,
    };
  }
}

/** The instructions of the provider summariser (kept short: they are paid on every call). */
export const SUMMARY_INSTRUCTIONS =
  'You write the memory of a conversation. Summarise the text you are given in at most {budget} tokens, ' +
  'as plain sentences. Keep every name, number, figure, date, choice and decision exactly as written, ' +
  'and every question that is still open. Drop greetings, politeness and repetition. ' +
  'When a previous summary is given, keep its facts unless the new turns change them. Never add anything ' +
  'that is not in the text.';

/** The user message of a summariser call: each source under its label, oldest first. */
export function summaryPrompt(sources: readonly ExtractiveSource[]): string {
  return sources.map((s) => `${s.label || 'Text'}:\n${s.text.trim()}`).join('\n\n');
}

/**
 * A summariser that calls the project's provider (or the summary model set for it) through the
 * same adapter as answers, classified with `classifyUpstreamError` (rate limits retried within
 * bounds by `streamWithRetry`). Its usage is what the provider reported for this call.
 */
export class ProviderSummariser implements Summariser {
  constructor(
    private readonly chat: ChatProvider,
    readonly provider: ProviderId,
    readonly model: string,
  ) {}

  async summarise(
    sources: readonly ExtractiveSource[],
    maxTokens: number,
    signal: AbortSignal,
  ): Promise<SummariserResult> {
    let text = '';
    let promptTokens: number | null = null;
    let completionTokens: number | null = null;
    const request = {
      model: this.model,
      maxTokens,
      signal,
      messages: [
        { role: 'system' as const, content: SUMMARY_INSTRUCTIONS.replace('{budget}', String(maxTokens)) },
        { role: 'user' as const, content: summaryPrompt(sources) },
      ],
    };
    try {
      for await (const chunk of streamWithRetry(this.chat, request, { signal })) {
        if (chunk.type === 'delta') text += chunk.text;
        else ({ promptTokens, completionTokens } = chunk);
      }
    } catch (err) {
      const failure: UpstreamFailure = signal.aborted ? { kind: 'timeout' } : classifyUpstreamError(err, this.provider);
      const outcome = failure.kind === 'timeout' ? 'timeout' : failure.kind === 'overflow' ? 'overflow' : 'failed';
      // The typed error's message is already sanitised (no secret, no raw body).
      throw new SummariserError(outcome, toAskError(failure).message);
    }
    return { text: text.trim(), promptTokens, completionTokens, cacheReadTokens: null };
  }
}
