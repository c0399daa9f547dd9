import type { ProviderId } from '@ask/model-catalog';
import type OpenAI from 'openai';
import { throwIfAborted, UpstreamStreamError } from '../errors/upstream-errors';
import type { ChatChunk, ChatProvider, ChatRequest, UsageChunk } from '../types';
import type { FetchLike } from '../wire/http';

/** Options of `OpenAiChatProvider`. */
export interface OpenAiChatOptions {
  /** A configured client (`OpenAI` or `AzureOpenAI`) with `maxRetries: 0`. */
  client: OpenAI;
  /** The provider id the adapter reports (`openai`, `azure-foundry`, or `vertex` for MaaS models). */
  provider: ProviderId;
  /**
   * The completion budget's field: `max_completion_tokens` on api.openai.com and Azure (required by
   * o-series and GPT-5), `max_tokens` on OpenAI-compatible servers (vLLM, llama.cpp, Vertex MaaS).
   */
  maxTokensField: 'max_completion_tokens' | 'max_tokens';
}

/** Finish reasons that mean the provider stopped the answer for content. */
const FILTERED = new Set(['content_filter']);

/**
 * Streamed Chat Completions on the OpenAI wire (https://platform.openai.com/docs/api-reference/chat/create)
 * through the official `openai` SDK: api.openai.com, OpenAI-compatible gateways on a custom base URL
 * (vLLM, llama.cpp), Azure OpenAI / Foundry deployments and Vertex AI MaaS models.
 *
 * Asks for `stream_options: { include_usage: true }` and yields each `delta.content`, then one `usage`
 * from the final usage chunk (`prompt_tokens` / `completion_tokens`; nulls when the server sends none).
 *
 * @throws the SDK's APIError for HTTP errors; UpstreamStreamError `content_filter` when the answer
 *   stops with `finish_reason: content_filter`, `incomplete` when the stream ends without a finish
 *   reason; the abort error when `request.signal` fires. Classify with `classifyUpstreamError`.
 */
export class OpenAiChatProvider implements ChatProvider {
  readonly provider: ProviderId;

  constructor(private readonly options: OpenAiChatOptions) {
    this.provider = options.provider;
  }

  async *streamChat(request: ChatRequest): AsyncGenerator<ChatChunk> {
    const { client, maxTokensField } = this.options;
    const stream = await client.chat.completions.create(
      {
        model: request.model,
        messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
        stream: true,
        stream_options: { include_usage: true },
        [maxTokensField]: request.maxTokens,
      } as OpenAI.Chat.ChatCompletionCreateParamsStreaming,
      { signal: request.signal },
    );
    let finished = false;
    let usage: UsageChunk | undefined;
    let model: string | undefined;
    let finishReason: string | undefined;
    for await (const chunk of stream) {
      if (chunk.model) model = chunk.model;
      if (chunk.usage) {
        usage = {
          type: 'usage',
          promptTokens: chunk.usage.prompt_tokens ?? null,
          completionTokens: chunk.usage.completion_tokens ?? null,
          raw: chunk.usage,
        };
      }
      for (const choice of chunk.choices ?? []) {
        const text = choice.delta?.content;
        if (text) yield { type: 'delta', text };
        if (choice.finish_reason) {
          finished = true;
          finishReason = choice.finish_reason;
          if (FILTERED.has(choice.finish_reason)) {
            throw new UpstreamStreamError(
              this.provider,
              'content_filter',
              `${this.provider}: the answer was stopped by the content filter`,
            );
          }
        }
      }
    }
    // The SDK ends the iteration quietly when the signal aborts; that is a timeout, not an answer.
    throwIfAborted(request.signal);
    if (!finished) {
      throw new UpstreamStreamError(
        this.provider,
        'incomplete',
        `${this.provider}: the stream ended without a finish_reason`,
      );
    }
    yield {
      ...(usage ?? { type: 'usage', promptTokens: null, completionTokens: null }),
      convention: 'openai',
      model,
      finishReason,
    };
  }
}

/**
 * Wraps `fetch` for OpenAI-compatible servers whose error bodies are not OpenAI-shaped. vLLM answers
 * `{"object":"error","message":…,"type":"BadRequestError","code":400}`; the openai SDK reads only
 * `body.error`, so that message would be lost. This moves such a body under `error` (same status,
 * same headers) so the SDK's APIError carries it. OpenAI-shaped bodies pass through untouched.
 */
export function openAiCompatibleFetch(base: FetchLike): FetchLike {
  return async (input, init) => {
    const response = await base(input, init);
    if (response.ok) return response;
    const text = await response.text();
    let body = text;
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !('error' in parsed) && 'message' in parsed) {
        body = JSON.stringify({ error: parsed });
      }
    } catch {
      // not JSON: the SDK keeps the text as the message
    }
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
