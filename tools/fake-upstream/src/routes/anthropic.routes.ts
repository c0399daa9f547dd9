import type { ProviderId } from '@ask/model-catalog';
import {
  countPromptTokens,
  countTextTokens,
  FAKE_ANSWER,
  FAKE_ANSWER_CHUNKS,
  type FakeMessage,
  textOf,
  windowOf,
} from '../prompt';
import type { ErrorPersona, Route, RouteContext, StreamPart } from '../route';

/** Anthropic's error envelope (https://docs.claude.com/en/api/errors). */
export const anthropicError = (type: string, message: string) => ({ type: 'error', error: { type, message } });

/** Anthropic's answers to the 429, 500 and content-filter faults. */
export const anthropicErrors: ErrorPersona = {
  rateLimited(ctx, seconds) {
    ctx.json(
      429,
      anthropicError('rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit'),
      {
        'retry-after': String(seconds),
      },
    );
  },
  serverError(ctx) {
    ctx.json(500, anthropicError('api_error', 'Internal server error'));
  },
  contentFilter(ctx, message) {
    ctx.json(400, anthropicError('invalid_request_error', message ?? 'Output blocked by content filtering policy'));
  },
  overflow(ctx, promptTokens, window) {
    ctx.json(
      400,
      anthropicError('invalid_request_error', `prompt is too long: ${promptTokens} tokens > ${window} maximum`),
    );
  },
};

/** The messages of an Anthropic body: `system` (string or text blocks) first, then `messages`. */
export function anthropicMessages(body: Record<string, unknown>): FakeMessage[] {
  const out: FakeMessage[] = [];
  const system = textOf(body['system']);
  if (system) out.push({ role: 'system', content: system });
  const list = Array.isArray(body['messages']) ? (body['messages'] as Array<Record<string, unknown>>) : [];
  for (const m of list) out.push({ role: String(m['role'] ?? 'user'), content: textOf(m['content']) });
  return out;
}

/**
 * The Anthropic overflow answer, or undefined when the prompt fits: "prompt is too long: P tokens > W
 * maximum" when the prompt alone exceeds the window, else "input length and `max_tokens` exceed context
 * limit: P + T > W…" when the completion budget does not fit beside it.
 */
export function anthropicOverflow(prompt: number, maxTokens: number, window: number): object | undefined {
  if (prompt > window)
    return anthropicError('invalid_request_error', `prompt is too long: ${prompt} tokens > ${window} maximum`);
  if (prompt + maxTokens > window) {
    return anthropicError(
      'invalid_request_error',
      `input length and \`max_tokens\` exceed context limit: ${prompt} + ${maxTokens} > ${window}, decrease input length or \`max_tokens\` and try again`,
    );
  }
  return undefined;
}

const sse = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/**
 * The Messages streaming event sequence (https://docs.claude.com/en/docs/build-with-claude/streaming):
 * message_start (usage.input_tokens), content_block_start, ping, content_block_delta × n,
 * content_block_stop, message_delta (stop_reason, usage.output_tokens), message_stop. The last two are
 * the final events a `truncate` fault drops.
 */
export function anthropicStream(model: string, prompt: number, completion: number): StreamPart[] {
  const parts: StreamPart[] = [
    {
      data: sse('message_start', {
        type: 'message_start',
        message: {
          id: 'msg_fake01',
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: prompt, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
        },
      }),
    },
    {
      data: sse('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'text', text: '' },
      }),
    },
    { data: sse('ping', { type: 'ping' }) },
  ];
  for (const text of FAKE_ANSWER_CHUNKS) {
    parts.push({
      data: sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
    });
  }
  parts.push({ data: sse('content_block_stop', { type: 'content_block_stop', index: 0 }) });
  parts.push({
    data: sse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: completion },
    }),
    final: true,
  });
  parts.push({ data: sse('message_stop', { type: 'message_stop' }), final: true, completes: true });
  return parts;
}

/** The non-streamed Messages answer. */
export function anthropicMessage(model: string, prompt: number, completion: number): object {
  return {
    id: 'msg_fake01',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text: FAKE_ANSWER }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: prompt, output_tokens: completion },
  };
}

/** `POST /v1/messages` for a provider whose windows the catalog knows (`anthropic`, `azure-foundry`). */
function messages(provider: ProviderId) {
  return async (ctx: RouteContext): Promise<void> => {
    if (!ctx.req.headers['anthropic-version']) {
      return ctx.json(400, anthropicError('invalid_request_error', 'anthropic-version: header is required'));
    }
    const model = String(ctx.body['model'] ?? '');
    const prompt = countPromptTokens(provider, model, anthropicMessages(ctx.body));
    ctx.record.promptTokens = prompt;
    const over = anthropicOverflow(prompt, Number(ctx.body['max_tokens'] ?? 0), windowOf(provider, model));
    if (over) return ctx.json(400, over);
    const completion = countTextTokens(provider, model, FAKE_ANSWER);
    if (ctx.body['stream'] !== true) return ctx.json(200, anthropicMessage(model, prompt, completion));
    await ctx.stream('text/event-stream; charset=utf-8', anthropicStream(model, prompt, completion), 4);
  };
}

/** `POST /v1/messages/count_tokens` (https://docs.claude.com/en/api/messages-count-tokens). */
function countTokens(provider: ProviderId) {
  return (ctx: RouteContext): void => {
    const model = String(ctx.body['model'] ?? '');
    const prompt = countPromptTokens(provider, model, anthropicMessages(ctx.body));
    ctx.record.promptTokens = prompt;
    ctx.json(200, { input_tokens: prompt });
  };
}

/** Anthropic accepts `x-api-key` (and a bearer: OAuth tokens, Foundry's Entra ID). */
const auth = {
  accepts: (scheme: string | null) => scheme === 'x-api-key' || scheme === 'bearer',
  reject: (ctx: RouteContext) => ctx.json(401, anthropicError('authentication_error', 'invalid x-api-key')),
};

/** Anthropic Messages, direct and through Azure AI Foundry (`/anthropic/v1/messages`). */
export const anthropicRoutes: readonly Route[] = [
  {
    name: 'anthropic.messages',
    method: 'POST',
    pattern: /^\/v1\/messages$/,
    faultable: true,
    auth,
    errors: anthropicErrors,
    handle: messages('anthropic'),
  },
  {
    name: 'anthropic.count_tokens',
    method: 'POST',
    pattern: /^\/v1\/messages\/count_tokens$/,
    faultable: false,
    auth,
    errors: anthropicErrors,
    handle: countTokens('anthropic'),
  },
  {
    name: 'foundry.anthropic.messages',
    method: 'POST',
    pattern: /^\/anthropic\/v1\/messages$/,
    faultable: true,
    auth,
    errors: anthropicErrors,
    handle: messages('azure-foundry'),
  },
];
