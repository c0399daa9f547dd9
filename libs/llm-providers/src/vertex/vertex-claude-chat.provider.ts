import { AnthropicStreamReader, type AnthropicStreamEvent } from '../chat/anthropic-events';
import { throwIfAborted, UpstreamStreamError } from '../errors/upstream-errors';
import type { ChatChunk, ChatProvider, ChatRequest } from '../types';
import { type FetchLike, postJson } from '../wire/http';
import { readSse } from '../wire/sse';
import { splitSystem } from '../wire/messages';
import type { TokenSource } from './vertex-auth';

/** Options of `VertexClaudeChatProvider`. */
export interface VertexClaudeOptions {
  /** `{host}/v1/projects/{project}/locations/{region}`. */
  locationUrl: string;
  token: TokenSource;
  fetch?: FetchLike;
}

/** The Anthropic API version Vertex AI requires in the body (https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/use-claude). */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/**
 * Claude on Vertex AI: `publishers/anthropic/models/{model}:streamRawPredict`, the Anthropic Messages
 * wire with `anthropic_version: "vertex-2023-10-16"` in the body and the model in the path, read as
 * Anthropic SSE events. No count endpoint (the seed plans Vertex Claude with the approximate counter).
 *
 * @throws UpstreamHttpError for a non-2xx answer (Anthropic-shaped overflow bodies, Google-shaped 429s);
 *   UpstreamStreamError `error_event` for `event: error`, `incomplete` without `message_stop`; the abort error.
 */
export class VertexClaudeChatProvider implements ChatProvider {
  readonly provider = 'vertex' as const;
  private readonly fetchImpl: FetchLike;

  constructor(private readonly options: VertexClaudeOptions) {
    this.fetchImpl = options.fetch ?? fetch;
  }

  async *streamChat(request: ChatRequest): AsyncGenerator<ChatChunk> {
    const { system, turns } = splitSystem(request.messages);
    const token = await this.options.token();
    const response = await postJson(
      this.fetchImpl,
      'vertex',
      `${this.options.locationUrl}/publishers/anthropic/models/${encodeURIComponent(request.model)}:streamRawPredict`,
      {
        anthropic_version: VERTEX_ANTHROPIC_VERSION,
        max_tokens: request.maxTokens,
        ...(system !== undefined ? { system } : {}),
        messages: turns.map((m) => ({ role: m.role, content: m.content })),
        stream: true,
      },
      { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      request.signal,
    );
    const reader = new AnthropicStreamReader('vertex');
    for await (const sse of readSse(response.body, request.signal)) {
      if (sse.event === 'ping') continue;
      if (sse.event === 'error')
        throw new UpstreamStreamError('vertex', 'error_event', 'vertex: error in the stream', sse.data);
      let event: AnthropicStreamEvent;
      try {
        event = JSON.parse(sse.data) as AnthropicStreamEvent;
      } catch {
        throw new UpstreamStreamError('vertex', 'protocol', 'vertex: an SSE event is not JSON');
      }
      const text = reader.read(event);
      if (text) yield { type: 'delta', text };
    }
    throwIfAborted(request.signal);
    yield reader.finish();
  }
}
