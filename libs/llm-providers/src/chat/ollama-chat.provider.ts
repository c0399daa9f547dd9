import { throwIfAborted, UpstreamStreamError } from '../errors/upstream-errors';
import type { ChatChunk, ChatProvider, ChatRequest } from '../types';
import { type FetchLike, postJson, trimSlash } from '../wire/http';
import { readNdjsonLines } from '../wire/ndjson';

/** Options of `OllamaChatProvider`. */
export interface OllamaChatOptions {
  /** The Ollama server, e.g. `http://localhost:11434` (no `/api`). */
  baseUrl: string;
  /** Sent as `options.num_ctx` only when set; otherwise the server's `OLLAMA_CONTEXT_LENGTH` applies. */
  numCtx?: number;
  /** A bearer for an authenticating proxy or Ollama's hosted API; local servers need none. */
  apiKey?: string;
  fetch?: FetchLike;
}

/** One NDJSON line of `/api/chat`. */
interface OllamaChatLine {
  model?: string;
  message?: { content?: string };
  done?: boolean;
  done_reason?: string;
  prompt_eval_count?: number;
  eval_count?: number;
  error?: string;
}

/**
 * Ollama's native chat (`POST /api/chat`, https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion),
 * streamed as NDJSON.
 *
 * The body always carries `truncate: false` and `shift: false`, so a prompt longer than the context
 * fails with a 400 instead of being silently cut from the front; `options.num_ctx` is sent only when
 * the project sets `numCtx` (a per-request num_ctx reloads the model and sizes its KV cache).
 * `options.num_predict` is the completion budget. Usage is `prompt_eval_count` / `eval_count` from the
 * final `done: true` line; compare the prompt figure with `detectSilentTruncation`.
 *
 * @throws UpstreamHttpError for a non-2xx answer; UpstreamStreamError `error_event` for an `{"error"}`
 *   line, `incomplete` when the stream ends without `done: true`, `protocol` for a line that is not JSON;
 *   the abort error when `request.signal` fires.
 */
export class OllamaChatProvider implements ChatProvider {
  readonly provider = 'ollama' as const;
  private readonly fetchImpl: FetchLike;

  constructor(private readonly options: OllamaChatOptions) {
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** The request body sent to `/api/chat` (exported for tests and docs). */
  buildBody(request: ChatRequest): Record<string, unknown> {
    return {
      model: request.model,
      messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
      stream: true,
      truncate: false,
      shift: false,
      options: {
        num_predict: request.maxTokens,
        ...(this.options.numCtx !== undefined ? { num_ctx: this.options.numCtx } : {}),
      },
    };
  }

  async *streamChat(request: ChatRequest): AsyncGenerator<ChatChunk> {
    const headers: Record<string, string> = { accept: 'application/x-ndjson' };
    if (this.options.apiKey) headers['authorization'] = `Bearer ${this.options.apiKey}`;
    const response = await postJson(
      this.fetchImpl,
      'ollama',
      `${trimSlash(this.options.baseUrl)}/api/chat`,
      this.buildBody(request),
      headers,
      request.signal,
    );
    let final: OllamaChatLine | undefined;
    for await (const line of readNdjsonLines(response.body, request.signal)) {
      if (line.trim() === '') continue;
      let parsed: OllamaChatLine;
      try {
        parsed = JSON.parse(line) as OllamaChatLine;
      } catch {
        throw new UpstreamStreamError('ollama', 'protocol', 'ollama: a stream line is not JSON');
      }
      if (parsed.error !== undefined) {
        throw new UpstreamStreamError(
          'ollama',
          'error_event',
          'ollama: error in the stream',
          JSON.stringify(parsed),
          500,
        );
      }
      const text = parsed.message?.content;
      if (text) yield { type: 'delta', text };
      if (parsed.done) final = parsed;
    }
    throwIfAborted(request.signal);
    if (!final) throw new UpstreamStreamError('ollama', 'incomplete', 'ollama: the stream ended without done: true');
    // The final line's counts and durations only: its message may carry answer text.
    const raw = Object.fromEntries(
      Object.entries(final).filter(([k, v]) => typeof v === 'number' && /_(count|duration)$/.test(k)),
    );
    yield {
      type: 'usage',
      promptTokens: final.prompt_eval_count ?? null,
      completionTokens: final.eval_count ?? null,
      raw,
      convention: 'ollama',
      model: final.model,
      finishReason: final.done_reason,
    };
  }
}
