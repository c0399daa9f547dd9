import { throwIfAborted, UpstreamStreamError } from '../errors/upstream-errors';
import type { ChatChunk, ChatProvider, ChatRequest } from '../types';
import { type FetchLike, postJson } from '../wire/http';
import { readSse } from '../wire/sse';
import { splitSystem } from '../wire/messages';
import type { TokenSource } from './vertex-auth';

/** Options of `VertexGeminiChatProvider`. */
export interface VertexGeminiOptions {
  /** `{host}/v1/projects/{project}/locations/{region}` (see `vertexLocationPath`). */
  locationUrl: string;
  token: TokenSource;
  fetch?: FetchLike;
}

/** One streamed `GenerateContentResponse`, the fields read here. */
interface GeminiChunk {
  candidates?: Array<{ content?: { parts?: Array<{ text?: string; thought?: boolean }> }; finishReason?: string }>;
  usageMetadata?: {
    promptTokenCount?: number;
    candidatesTokenCount?: number;
    thoughtsTokenCount?: number;
    cachedContentTokenCount?: number;
  };
  modelVersion?: string;
  promptFeedback?: { blockReason?: string };
  error?: { code?: number; message?: string; status?: string };
}

/** Finish reasons that mean the answer was withheld for content (Vertex `FinishReason`). */
const FILTERED = new Set(['SAFETY', 'PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII', 'RECITATION', 'IMAGE_SAFETY']);

/**
 * Gemini on Vertex AI: `:streamGenerateContent?alt=sse` and `:countTokens`
 * (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference), with an OAuth
 * bearer from `vertexTokenSource`.
 *
 * The system prompt goes in `systemInstruction`; turns in `contents` (role `user` / `model`);
 * `generationConfig.maxOutputTokens` is the completion budget. Yields each chunk's text parts (thought
 * parts skipped), then usage from the last `usageMetadata` (`promptTokenCount` / `candidatesTokenCount`).
 *
 * @throws UpstreamHttpError for a non-2xx answer (e.g. the 400 INVALID_ARGUMENT overflow);
 *   UpstreamStreamError `error_event` for an in-stream error, `content_filter` for a SAFETY-class
 *   finish or a blocked prompt, `incomplete` when no chunk carried a finishReason; the abort error.
 */
export class VertexGeminiChatProvider implements ChatProvider {
  readonly provider = 'vertex' as const;
  private readonly fetchImpl: FetchLike;

  constructor(private readonly options: VertexGeminiOptions) {
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** The `contents` / `systemInstruction` part of a request body. */
  private prompt(request: ChatRequest): Record<string, unknown> {
    const { system, turns } = splitSystem(request.messages);
    return {
      contents: turns.map((m) => ({ role: m.role === 'assistant' ? 'model' : 'user', parts: [{ text: m.content }] })),
      ...(system !== undefined ? { systemInstruction: { parts: [{ text: system }] } } : {}),
    };
  }

  private url(model: string, method: string): string {
    return `${this.options.locationUrl}/publishers/google/models/${encodeURIComponent(model)}:${method}`;
  }

  async *streamChat(request: ChatRequest): AsyncGenerator<ChatChunk> {
    const token = await this.options.token();
    const response = await postJson(
      this.fetchImpl,
      'vertex',
      `${this.url(request.model, 'streamGenerateContent')}?alt=sse`,
      { ...this.prompt(request), generationConfig: { maxOutputTokens: request.maxTokens } },
      { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      request.signal,
    );
    let finished = false;
    let promptTokens: number | null = null;
    let completionTokens: number | null = null;
    let raw: unknown;
    let model: string | undefined;
    let finishReason: string | undefined;
    for await (const event of readSse(response.body, request.signal)) {
      let chunk: GeminiChunk;
      try {
        chunk = JSON.parse(event.data) as GeminiChunk;
      } catch {
        throw new UpstreamStreamError('vertex', 'protocol', 'vertex: an SSE event is not JSON');
      }
      if (chunk.error)
        throw new UpstreamStreamError(
          'vertex',
          'error_event',
          'vertex: error in the stream',
          event.data,
          chunk.error.code,
        );
      if (chunk.promptFeedback?.blockReason) {
        throw new UpstreamStreamError(
          'vertex',
          'content_filter',
          `vertex: the prompt was blocked (${chunk.promptFeedback.blockReason})`,
        );
      }
      const candidate = chunk.candidates?.[0];
      for (const part of candidate?.content?.parts ?? []) {
        if (part.text && !part.thought) yield { type: 'delta', text: part.text };
      }
      if (chunk.modelVersion) model = chunk.modelVersion;
      if (chunk.usageMetadata) {
        raw = chunk.usageMetadata;
        promptTokens = chunk.usageMetadata.promptTokenCount ?? promptTokens;
        completionTokens = chunk.usageMetadata.candidatesTokenCount ?? completionTokens;
      }
      if (candidate?.finishReason) {
        finished = true;
        finishReason = candidate.finishReason;
        if (FILTERED.has(candidate.finishReason)) {
          throw new UpstreamStreamError(
            'vertex',
            'content_filter',
            `vertex: the answer was stopped (${candidate.finishReason})`,
          );
        }
      }
    }
    throwIfAborted(request.signal);
    if (!finished)
      throw new UpstreamStreamError('vertex', 'incomplete', 'vertex: the stream ended without a finishReason');
    yield { type: 'usage', promptTokens, completionTokens, raw, convention: 'gemini', model, finishReason };
  }

  /**
   * Exact prompt tokens from `:countTokens` (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/count-tokens);
   * no generation quota is used. @throws UpstreamHttpError for a non-2xx answer.
   */
  async countRequestTokens(request: ChatRequest): Promise<number> {
    const token = await this.options.token();
    const response = await postJson(
      this.fetchImpl,
      'vertex',
      this.url(request.model, 'countTokens'),
      this.prompt(request),
      { authorization: `Bearer ${token}` },
      request.signal,
    );
    const body = (await response.json()) as { totalTokens?: number };
    return body.totalTokens ?? 0;
  }
}
