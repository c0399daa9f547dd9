import type { ProviderId } from '@ask/model-catalog';
import type { ChatMessage } from '@ask/token-counting';
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

/**
 * Which server the OpenAI wire is pretending to be, for its error bodies:
 * - `openai`: api.openai.com (https://platform.openai.com/docs/guides/error-codes);
 * - `azure`: Azure OpenAI / Foundry (https://learn.microsoft.com/azure/ai-foundry/openai/reference);
 * - `vllm`: vLLM's OpenAI-compatible server (also behind Vertex MaaS);
 * - `llamacpp`: llama.cpp's server (`exceed_context_size_error`).
 */
export type OpenAiPersona = 'openai' | 'azure' | 'vllm' | 'llamacpp';

/** The persona of the canonical `/v1/chat/completions` path, from the model id. */
function personaOf(model: string): OpenAiPersona {
  if (/\.gguf$|llama\.?cpp/i.test(model)) return 'llamacpp';
  if (/^(gpt-|o\d|chatgpt|text-embedding|davinci|babbage)/i.test(model)) return 'openai';
  return 'vllm';
}

function errorBody(
  persona: OpenAiPersona,
  message: string,
  type: string | null,
  code: string | number | null,
  param: string | null = null,
) {
  if (persona === 'vllm')
    return {
      object: 'error',
      message,
      type: type ?? 'BadRequestError',
      param,
      code: typeof code === 'number' ? code : 400,
    };
  return { error: { message, type, param, code } };
}

function persona(p: OpenAiPersona): ErrorPersona {
  return {
    rateLimited(ctx, seconds) {
      const message =
        p === 'azure'
          ? `Requests to the ChatCompletions_Create Operation under Azure OpenAI API have exceeded token rate limit of your current tier. Please retry after ${seconds} second.`
          : `Rate limit reached for requests. Please try again in ${seconds}s.`;
      ctx.json(
        429,
        errorBody(
          p,
          message,
          p === 'vllm' ? 'RateLimitError' : 'requests',
          p === 'vllm' ? 429 : p === 'azure' ? '429' : 'rate_limit_exceeded',
        ),
        {
          'retry-after': String(seconds),
          'retry-after-ms': String(seconds * 1000),
          'x-ratelimit-remaining-requests': '0',
        },
      );
    },
    serverError(ctx) {
      ctx.json(
        500,
        errorBody(
          p,
          'The server had an error while processing your request. Sorry about that!',
          p === 'vllm' ? 'InternalServerError' : 'server_error',
          p === 'vllm' ? 500 : null,
        ),
      );
    },
    contentFilter(ctx, message) {
      if (p === 'azure') {
        ctx.json(400, {
          error: {
            message:
              message ??
              "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry.",
            type: null,
            param: 'prompt',
            code: 'content_filter',
            status: 400,
            innererror: {
              code: 'ResponsibleAIPolicyViolation',
              content_filter_result: { hate: { filtered: true, severity: 'high' } },
            },
          },
        });
        return;
      }
      ctx.json(
        400,
        errorBody(
          p,
          message ?? 'Your request was rejected as a result of our safety system.',
          'invalid_request_error',
          p === 'vllm' ? 400 : 'content_policy_violation',
        ),
      );
    },
  };
}

/** The provider's overflow answer when the prompt does not fit `window`, or undefined when it fits. */
function overflow(
  p: OpenAiPersona,
  window: number,
  prompt: number,
  completion: number,
): { status: number; body: unknown } | undefined {
  switch (p) {
    case 'openai':
      if (prompt <= window) return undefined;
      return {
        status: 400,
        body: errorBody(
          p,
          `This model's maximum context length is ${window} tokens. However, your messages resulted in ${prompt} tokens. Please reduce the length of the messages.`,
          'invalid_request_error',
          'context_length_exceeded',
          'messages',
        ),
      };
    case 'azure':
      if (prompt <= window) return undefined;
      return {
        status: 400,
        body: errorBody(
          p,
          `Input tokens exceed the configured limit of ${window} tokens. Your messages resulted in ${prompt} tokens. Please reduce the length of the messages.`,
          'invalid_request_error',
          'context_length_exceeded',
          'messages',
        ),
      };
    case 'vllm':
      if (prompt + completion <= window) return undefined;
      return {
        status: 400,
        body: errorBody(
          p,
          `This model's maximum context length is ${window} tokens. However, you requested ${prompt + completion} tokens (${prompt} in the messages, ${completion} in the completion). Please reduce the length of the messages or completion.`,
          'BadRequestError',
          400,
        ),
      };
    case 'llamacpp':
      if (prompt <= window) return undefined;
      return {
        status: 400,
        body: {
          error: {
            code: 400,
            message: 'the request exceeds the available context size, try increasing it',
            type: 'exceed_context_size_error',
            n_prompt_tokens: prompt,
            n_ctx: window,
          },
        },
      };
  }
}

function toChatMessage(m: FakeMessage): ChatMessage {
  return { role: m.role === 'system' ? 'system' : m.role === 'assistant' ? 'assistant' : 'user', content: m.content };
}

function messagesOf(body: Record<string, unknown>): FakeMessage[] {
  const list = Array.isArray(body['messages']) ? (body['messages'] as Array<Record<string, unknown>>) : [];
  return list.map((m) => ({ role: String(m['role'] ?? 'user'), content: textOf(m['content']) }));
}

const sse = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`;

/**
 * Chat Completions on the OpenAI wire (https://platform.openai.com/docs/api-reference/chat/create):
 * non-streamed, or SSE `chat.completion.chunk`s ending with a `finish_reason` chunk, a usage chunk
 * (`choices: []`) when `stream_options.include_usage` is set, and `data: [DONE]`.
 */
export function openAiChat(
  p: OpenAiPersona | 'by-model',
  provider: ProviderId,
  modelFrom: (ctx: RouteContext) => string,
) {
  return async (ctx: RouteContext): Promise<void> => {
    const model = modelFrom(ctx);
    const who = p === 'by-model' ? personaOf(model) : p;
    const messages = messagesOf(ctx.body);
    const gateway = who === 'vllm' || who === 'llamacpp' ? 'http://gateway' : undefined;
    const { counter, promptScale = 1, windows } = ctx.enforce;
    const counted = counter
      ? counter.countMessages(messages.map(toChatMessage))
      : countPromptTokens(provider, model, messages, gateway);
    const prompt = promptScale === 1 ? counted : Math.ceil(counted * promptScale);
    ctx.record.promptTokens = prompt;
    const maxTokens = Number(ctx.body['max_completion_tokens'] ?? ctx.body['max_tokens'] ?? 0);
    const over = overflow(who, windows?.[model] ?? windowOf(provider, model), prompt, maxTokens);
    if (over) return ctx.json(over.status, over.body);
    const chunks = ctx.answerChunks ?? FAKE_ANSWER_CHUNKS;
    const answer = ctx.answerChunks ? chunks.join('') : FAKE_ANSWER;
    const completion = countTextTokens(provider, model, answer, gateway);
    const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    const base = { id: 'chatcmpl-fake', created: 1767225600, model, system_fingerprint: 'fp_fake' };
    if (ctx.body['stream'] !== true) {
      return ctx.json(200, {
        ...base,
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: answer, refusal: null },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage,
      });
    }
    const includeUsage =
      (ctx.body['stream_options'] as { include_usage?: boolean } | undefined)?.include_usage === true;
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
      sse({ ...base, object: 'chat.completion.chunk', choices, ...(includeUsage ? { usage: null } : {}), ...extra });
    const parts: StreamPart[] = [];
    if (who === 'azure') {
      parts.push({
        data: sse({
          id: '',
          object: '',
          created: 0,
          model: '',
          choices: [],
          prompt_filter_results: [{ prompt_index: 0, content_filter_results: {} }],
        }),
      });
    }
    parts.push({
      data: chunk([
        { index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null },
      ]),
    });
    for (const text of chunks) {
      parts.push({ data: chunk([{ index: 0, delta: { content: text }, logprobs: null, finish_reason: null }]) });
    }
    parts.push({
      data: chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]),
      final: true,
      completes: true,
    });
    if (includeUsage)
      parts.push({ data: sse({ ...base, object: 'chat.completion.chunk', choices: [], usage }), final: true });
    parts.push({ data: 'data: [DONE]\n\n', final: true });
    await ctx.stream('text/event-stream; charset=utf-8', parts);
  };
}

/** Default vector length per OpenAI embedding model (https://platform.openai.com/docs/guides/embeddings). */
function defaultDimensions(model: string): number {
  if (/text-embedding-3-large/.test(model)) return 3072;
  return 1536;
}

/**
 * Embeddings on the OpenAI wire (https://platform.openai.com/docs/api-reference/embeddings/create):
 * `input` string or array, optional `dimensions`, `encoding_format` `float` or `base64` (little-endian
 * float32, which the openai SDK asks for by default).
 */
export function openAiEmbeddings(modelFrom: (ctx: RouteContext) => string) {
  return (ctx: RouteContext): void => {
    const model = modelFrom(ctx);
    const input = ctx.body['input'];
    const texts = Array.isArray(input) ? input.map(String) : [String(input ?? '')];
    const dimensions = Number(ctx.body['dimensions'] ?? defaultDimensions(model));
    const base64 = ctx.body['encoding_format'] === 'base64';
    const tokens = texts.reduce((s, t) => s + countTextTokens('openai', 'text-embedding-3-small', t), 0);
    ctx.json(200, {
      object: 'list',
      data: texts.map((text, index) => {
        const vector = fakeEmbedding(text, dimensions);
        return {
          object: 'embedding',
          index,
          embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector,
        };
      }),
      model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  };
}

const bearer = {
  accepts: (scheme: string | null) => scheme === 'bearer',
  reject: (ctx: RouteContext) =>
    ctx.json(401, {
      error: {
        message:
          "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth.",
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    }),
};

/** Azure accepts its `api-key` header or an Entra ID / key bearer. */
export const azureAuth = {
  accepts: (scheme: string | null) => scheme === 'api-key' || scheme === 'bearer',
  reject: (ctx: RouteContext) =>
    ctx.json(401, {
      error: {
        code: '401',
        message:
          'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
      },
    }),
};

const bodyModel = (ctx: RouteContext) => String(ctx.body['model'] ?? '');
const deployment = (ctx: RouteContext) => ctx.params[0] ?? '';

/** Azure's classic deployment paths need `api-version`; without it Azure answers 404. */
function requireApiVersion(handler: (ctx: RouteContext) => void | Promise<void>) {
  return (ctx: RouteContext) => {
    if (!ctx.url.searchParams.get('api-version')) {
      return ctx.json(404, { error: { code: '404', message: 'Resource not found' } });
    }
    return handler(ctx);
  };
}

/** OpenAI (canonical and OpenAI-compatible gateways) and Azure OpenAI / Foundry routes. */
export const openaiRoutes: readonly Route[] = [
  {
    name: 'openai.chat',
    method: 'POST',
    pattern: /^\/v1\/chat\/completions$/,
    faultable: true,
    auth: bearer,
    errors: {
      rateLimited: (ctx, s) => persona(personaOf(bodyModel(ctx))).rateLimited(ctx, s),
      serverError: (ctx) => persona(personaOf(bodyModel(ctx))).serverError(ctx),
      contentFilter: (ctx, m) => persona(personaOf(bodyModel(ctx))).contentFilter(ctx, m),
    },
    handle: openAiChat('by-model', 'openai', bodyModel),
  },
  {
    name: 'openai.embeddings',
    method: 'POST',
    pattern: /^\/v1\/embeddings$/,
    faultable: true,
    auth: bearer,
    errors: persona('openai'),
    handle: openAiEmbeddings(bodyModel),
  },
  {
    name: 'azure.deployments.chat',
    method: 'POST',
    pattern: /^\/openai\/deployments\/([^/]+)\/chat\/completions$/,
    faultable: true,
    auth: azureAuth,
    errors: persona('azure'),
    handle: requireApiVersion(openAiChat('azure', 'azure-foundry', deployment)),
  },
  {
    name: 'azure.deployments.embeddings',
    method: 'POST',
    pattern: /^\/openai\/deployments\/([^/]+)\/embeddings$/,
    faultable: true,
    auth: azureAuth,
    errors: persona('azure'),
    handle: requireApiVersion(openAiEmbeddings(deployment)),
  },
  {
    name: 'azure.v1.chat',
    method: 'POST',
    pattern: /^\/openai\/v1\/chat\/completions$/,
    faultable: true,
    auth: azureAuth,
    errors: persona('azure'),
    handle: openAiChat('azure', 'azure-foundry', bodyModel),
  },
  {
    name: 'azure.v1.embeddings',
    method: 'POST',
    pattern: /^\/openai\/v1\/embeddings$/,
    faultable: true,
    auth: azureAuth,
    errors: persona('azure'),
    handle: openAiEmbeddings(bodyModel),
  },
];

export { persona as openAiPersona };
