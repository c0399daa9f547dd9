import {
  countPromptTokens,
  countTextTokens,
  FAKE_ANSWER,
  FAKE_ANSWER_CHUNKS,
  type FakeMessage,
  fakeEmbedding,
  textOf,
  windowOf,
} from '../prompt';
import type { ErrorPersona, Route, RouteContext, StreamPart } from '../route';

const CREATED_AT = '2026-01-01T00:00:00.000000Z';

/** Ollama's errors are `{"error": "<text>"}` (https://github.com/ollama/ollama/blob/main/docs/api.md#errors). */
const ollamaErrors: ErrorPersona = {
  rateLimited(ctx, seconds) {
    ctx.json(429, { error: 'too many requests, please retry later' }, { 'retry-after': String(seconds) });
  },
  serverError(ctx) {
    ctx.json(500, { error: 'llama runner process has terminated: exit status 2' });
  },
  contentFilter(ctx, message) {
    ctx.json(400, { error: message ?? 'the request was rejected by the content policy of this server' });
  },
};

/**
 * The 400 Ollama answers with `truncate: false` when the rendered prompt exceeds `num_ctx`: the llama.cpp
 * runner's JSON error, relayed as a string inside Ollama's `{"error": …}` (observed on Ollama 0.33).
 */
function contextSizeError(prompt: number, window: number): { error: string } {
  return {
    error: JSON.stringify({
      error: {
        code: 400,
        message: `request (${prompt} tokens) exceeds the available context size (${window} tokens), try increasing it`,
        type: 'exceed_context_size_error',
        n_prompt_tokens: prompt,
        n_ctx: window,
      },
    }),
  };
}

/**
 * What Ollama keeps of an oversize prompt when truncation is on: it discards from the front down to
 * about half the context (`numCtx - (numCtx - numKeep) / 2`, numKeep 4), in tokens.
 */
export function ollamaShiftedPrompt(window: number): number {
  return window - Math.floor((window - 4) / 2);
}

/**
 * `POST /api/chat` (https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion):
 * NDJSON lines `{message:{content}, done:false}`, then `{done:true, done_reason, prompt_eval_count,
 * eval_count, …}`. The window is `options.num_ctx` when sent, else the catalog's. An oversize prompt fails
 * with a 400 when `truncate: false` or `shift: false` is set, and is silently cut otherwise (reported in
 * `prompt_eval_count`, as Ollama does).
 */
async function chat(ctx: RouteContext): Promise<void> {
  const model = String(ctx.body['model'] ?? '');
  const list = Array.isArray(ctx.body['messages']) ? (ctx.body['messages'] as Array<Record<string, unknown>>) : [];
  const messages: FakeMessage[] = list.map((m) => ({
    role: String(m['role'] ?? 'user'),
    content: textOf(m['content']),
  }));
  const prompt = countPromptTokens('ollama', model, messages);
  ctx.record.promptTokens = prompt;
  const options = (ctx.body['options'] ?? {}) as Record<string, unknown>;
  const window = typeof options['num_ctx'] === 'number' ? options['num_ctx'] : windowOf('ollama', model);
  let reported = prompt;
  if (prompt > window) {
    if (ctx.body['truncate'] === false) return ctx.json(400, contextSizeError(prompt, window));
    if (ctx.body['shift'] === false) {
      return ctx.json(400, {
        error: 'the prompt is longer than the context length currently available to the model; try increasing num_ctx',
      });
    }
    reported = ollamaShiftedPrompt(window);
  }
  if (ctx.fault?.kind === 'silent-truncation') reported = Math.max(1, Math.floor(prompt / 4));
  const evalCount = countTextTokens('ollama', model, FAKE_ANSWER);
  const final = {
    model,
    created_at: CREATED_AT,
    message: { role: 'assistant', content: '' },
    done: true,
    done_reason: 'stop',
    total_duration: 123456789,
    load_duration: 1234567,
    prompt_eval_count: reported,
    prompt_eval_duration: 2345678,
    eval_count: evalCount,
    eval_duration: 3456789,
  };
  if (ctx.body['stream'] === false) {
    return ctx.json(200, { ...final, message: { role: 'assistant', content: FAKE_ANSWER } });
  }
  const parts: StreamPart[] = FAKE_ANSWER_CHUNKS.map((content) => ({
    data: `${JSON.stringify({ model, created_at: CREATED_AT, message: { role: 'assistant', content }, done: false })}\n`,
  }));
  parts.push({ data: `${JSON.stringify(final)}\n`, final: true, completes: true });
  await ctx.stream('application/x-ndjson', parts);
}

/** Vector length and context (tokens) of the common Ollama embedding models (their model cards). */
const EMBED_MODELS: ReadonlyArray<[RegExp, number, number]> = [
  [/^nomic-embed-text/, 768, 8192],
  [/^mxbai-embed-large/, 1024, 512],
  [/^all-minilm/, 384, 512],
  [/^snowflake-arctic-embed2?/, 1024, 8192],
  [/^bge-m3/, 1024, 8192],
  [/^embeddinggemma/, 768, 2048],
  [/^qwen3-embedding/, 1024, 32768],
];

/**
 * `POST /api/embed` (https://github.com/ollama/ollama/blob/main/docs/api.md#generate-embeddings):
 * `{model, input: string | string[], truncate?, dimensions?}` → `{model, embeddings, prompt_eval_count}`.
 * With `truncate: false` an input past the model's context is a 400.
 */
function embed(ctx: RouteContext): void {
  const model = String(ctx.body['model'] ?? '');
  const input = ctx.body['input'];
  const texts = Array.isArray(input) ? input.map(String) : [String(input ?? '')];
  const row = EMBED_MODELS.find(([pattern]) => pattern.test(model));
  const dimensions = typeof ctx.body['dimensions'] === 'number' ? ctx.body['dimensions'] : (row?.[1] ?? 768);
  const context = row?.[2] ?? 8192;
  const counts = texts.map((t) => countTextTokens('ollama', model, t));
  if (ctx.body['truncate'] === false && counts.some((c) => c > context)) {
    return ctx.json(400, { error: 'the input length exceeds the context length' });
  }
  ctx.json(200, {
    model,
    embeddings: texts.map((t) => fakeEmbedding(t, dimensions)),
    total_duration: 14143917,
    load_duration: 1019500,
    prompt_eval_count: counts.reduce((s, c) => s + Math.min(c, context), 0),
  });
}

/** Ollama's native API: no auth (a proxy may add a bearer; it is accepted and not required). */
export const ollamaRoutes: readonly Route[] = [
  {
    name: 'ollama.chat',
    method: 'POST',
    pattern: /^\/api\/chat$/,
    faultable: true,
    errors: ollamaErrors,
    handle: chat,
  },
  {
    name: 'ollama.embed',
    method: 'POST',
    pattern: /^\/api\/embed$/,
    faultable: true,
    errors: ollamaErrors,
    handle: embed,
  },
];
