import type Anthropic from '@anthropic-ai/sdk';
import { throwIfAborted } from '../errors/upstream-errors';
import type { ChatChunk, ChatProvider, ChatRequest } from '../types';
import { splitSystem } from '../wire/messages';
import { type AnthropicStreamEvent, AnthropicStreamReader } from './anthropic-events';

/** Options of `AnthropicChatProvider`. */
export interface AnthropicChatOptions {
  /** A configured client (`maxRetries: 0`). */
  client: Anthropic;
  /** `anthropic` (direct) or `azure-foundry` (Claude through Foundry's `/anthropic` endpoint). */
  provider: 'anthropic' | 'azure-foundry';
  /** Whether the endpoint serves `/v1/messages/count_tokens` (Anthropic direct does; Foundry does not). */
  countTokens: boolean;
}

/**
 * Anthropic Messages (https://docs.claude.com/en/api/messages), streamed through `@anthropic-ai/sdk`:
 * Anthropic's own API and Claude deployments on Azure AI Foundry. The system prompt goes in `system`;
 * user/assistant turns in `messages`. Yields `text_delta`s, then usage from `message_start` /
 * `message_delta`.
 *
 * `countRequestTokens` (direct Anthropic only) asks `/v1/messages/count_tokens` for the exact prompt
 * tokens of the assembled request (https://docs.claude.com/en/api/messages-count-tokens).
 *
 * @throws the SDK's APIError (HTTP errors, and `event: error` inside the stream, e.g. overloaded_error);
 *   UpstreamStreamError `incomplete` without `message_stop`, `content_filter` on a refusal; the abort
 *   error when `request.signal` fires.
 */
export class AnthropicChatProvider implements ChatProvider {
  readonly provider: 'anthropic' | 'azure-foundry';
  readonly countRequestTokens?: (request: ChatRequest) => Promise<number>;

  constructor(private readonly options: AnthropicChatOptions) {
    this.provider = options.provider;
    if (options.countTokens) this.countRequestTokens = (request) => this.count(request);
  }

  async *streamChat(request: ChatRequest): AsyncGenerator<ChatChunk> {
    const { system, turns } = splitSystem(request.messages);
    const stream = await this.options.client.messages.create(
      {
        model: request.model,
        max_tokens: request.maxTokens,
        ...(system !== undefined ? { system } : {}),
        messages: turns.map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content })),
        stream: true,
      },
      { signal: request.signal },
    );
    const reader = new AnthropicStreamReader(this.provider);
    for await (const event of stream) {
      const text = reader.read(event as AnthropicStreamEvent);
      if (text) yield { type: 'delta', text };
    }
    // The SDK ends the iteration quietly when the signal aborts; that is a timeout, not an answer.
    throwIfAborted(request.signal);
    yield reader.finish();
  }

  private async count(request: ChatRequest): Promise<number> {
    const { system, turns } = splitSystem(request.messages);
    const result = await this.options.client.messages.countTokens(
      {
        model: request.model,
        ...(system !== undefined ? { system } : {}),
        messages: turns.map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content })),
      },
      { signal: request.signal },
    );
    return result.input_tokens;
  }
}
