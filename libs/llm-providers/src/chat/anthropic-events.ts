import type { ProviderId } from '@ask/model-catalog';
import { UpstreamStreamError } from '../errors/upstream-errors';
import type { ChatChunk } from '../types';

/** The fields of Anthropic stream events this adapter reads (https://docs.claude.com/en/docs/build-with-claude/streaming). */
export interface AnthropicStreamEvent {
  type: string;
  message?: { model?: string; usage?: AnthropicUsage };
  delta?: { type?: string; text?: string; stop_reason?: string | null };
  usage?: AnthropicUsage;
  error?: { type?: string; message?: string };
}

interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** Stop reasons that mean the answer was withheld for content. */
const FILTERED_STOPS = new Set(['refusal']);

/**
 * Turns Anthropic Messages stream events into chat chunks, for the SDK path (Anthropic, Foundry) and
 * the raw SSE path (Claude on Vertex). Prompt tokens are `input_tokens` plus cache creation and cache
 * reads (all three are prompt); completion tokens are `message_delta`'s cumulative `output_tokens`.
 */
export class AnthropicStreamReader {
  private promptTokens: number | null = null;
  private completionTokens: number | null = null;
  private stopped = false;
  /** `message_start`'s usage, updated by the non-null fields of each `message_delta` usage (cumulative). */
  private raw: Record<string, unknown> | undefined;
  private model: string | undefined;
  private stopReason: string | undefined;

  constructor(private readonly provider: ProviderId) {}

  /** The text delta an event carries, if any. @throws UpstreamStreamError for a refusal stop. */
  read(event: AnthropicStreamEvent): string | undefined {
    switch (event.type) {
      case 'message_start': {
        const u = event.message?.usage;
        this.model = event.message?.model;
        if (u) {
          this.raw = { ...u };
          this.promptTokens =
            (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
          this.completionTokens = u.output_tokens ?? null;
        }
        return undefined;
      }
      case 'content_block_delta':
        return event.delta?.type === 'text_delta' ? event.delta.text : undefined;
      case 'message_delta':
        if (typeof event.usage?.output_tokens === 'number') this.completionTokens = event.usage.output_tokens;
        if (event.usage) {
          const defined = Object.entries(event.usage).filter(([, v]) => v !== null && v !== undefined);
          this.raw = { ...(this.raw ?? {}), ...Object.fromEntries(defined) };
        }
        if (event.delta?.stop_reason) this.stopReason = event.delta.stop_reason;
        if (event.delta?.stop_reason && FILTERED_STOPS.has(event.delta.stop_reason)) {
          throw new UpstreamStreamError(
            this.provider,
            'content_filter',
            `${this.provider}: the model declined to answer (refusal)`,
          );
        }
        return undefined;
      case 'message_stop':
        this.stopped = true;
        return undefined;
      default:
        return undefined;
    }
  }

  /** The usage chunk. @throws UpstreamStreamError `incomplete` when `message_stop` never came. */
  finish(): ChatChunk {
    if (!this.stopped) {
      throw new UpstreamStreamError(
        this.provider,
        'incomplete',
        `${this.provider}: the stream ended without message_stop`,
      );
    }
    return {
      type: 'usage',
      promptTokens: this.promptTokens,
      completionTokens: this.completionTokens,
      raw: this.raw,
      convention: 'anthropic',
      model: this.model,
      finishReason: this.stopReason,
    };
  }
}
