import { EventStreamCodec } from '@smithy/core/event-streams';
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

const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** The AWS SDK's own event-stream codec, so the frames (prelude, headers, CRC32s) are what it decodes. */
const codec = new EventStreamCodec(
  (bytes) => decoder.decode(bytes),
  (text) => encoder.encode(text),
);

/**
 * One event-stream frame (https://docs.aws.amazon.com/transcribe/latest/dg/event-stream.html):
 * `:message-type` event, `:event-type` the ConverseStream member name, JSON payload.
 */
export function eventFrame(eventType: string, payload: unknown): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: encoder.encode(JSON.stringify(payload)),
  });
}

/** An in-stream exception frame (`:message-type` exception), as Bedrock sends mid-stream failures. */
export function exceptionFrame(exceptionType: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ':exception-type': { type: 'string', value: exceptionType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    body: encoder.encode(JSON.stringify({ message })),
  });
}

/**
 * Bedrock Runtime's restJson1 error: the status, `x-amzn-ErrorType: <Name>:…` and `{"message": …}`
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html).
 */
function awsError(
  ctx: RouteContext,
  status: number,
  name: string,
  message: string,
  headers: Record<string, string> = {},
): void {
  ctx.json(
    status,
    { message },
    {
      'x-amzn-errortype': `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      'x-amzn-requestid': 'fake-request-id',
      ...headers,
    },
  );
}

const bedrockErrors: ErrorPersona = {
  rateLimited(ctx, seconds) {
    awsError(ctx, 429, 'ThrottlingException', 'Too many requests, please wait before trying again.', {
      'retry-after': String(seconds),
    });
  },
  serverError(ctx) {
    awsError(
      ctx,
      500,
      'InternalServerException',
      'The server encountered an internal error while processing the request.',
    );
  },
  contentFilter(ctx, message) {
    awsError(
      ctx,
      400,
      'ValidationException',
      message ?? 'The model returned the following errors: the request was blocked by the content filter.',
    );
  },
};

/** The Converse prompt: `system` text blocks, then `messages` with their text content blocks. */
function converseMessages(body: Record<string, unknown>): FakeMessage[] {
  const out: FakeMessage[] = [];
  const system = textOf(body['system']);
  if (system) out.push({ role: 'system', content: system });
  const list = Array.isArray(body['messages']) ? (body['messages'] as Array<Record<string, unknown>>) : [];
  for (const m of list) out.push({ role: String(m['role'] ?? 'user'), content: textOf(m['content']) });
  return out;
}

/** Counts the prompt, or answers Bedrock's overflow ValidationException ("Input is too long for requested model."). */
function prepare(ctx: RouteContext): { model: string; prompt: number; completion: number } | undefined {
  const model = ctx.params[0] ?? '';
  const prompt = countPromptTokens('bedrock', model, converseMessages(ctx.body));
  ctx.record.promptTokens = prompt;
  if (prompt > windowOf('bedrock', model)) {
    awsError(ctx, 400, 'ValidationException', 'Input is too long for requested model.');
    return undefined;
  }
  return { model, prompt, completion: countTextTokens('bedrock', model, FAKE_ANSWER) };
}

/** `POST /model/{modelId}/converse` (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html). */
function converse(ctx: RouteContext): void {
  const p = prepare(ctx);
  if (!p) return;
  ctx.json(200, {
    output: { message: { role: 'assistant', content: [{ text: FAKE_ANSWER }] } },
    stopReason: 'end_turn',
    usage: { inputTokens: p.prompt, outputTokens: p.completion, totalTokens: p.prompt + p.completion },
    metrics: { latencyMs: 42 },
  });
}

/**
 * `POST /model/{modelId}/converse-stream`
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html): binary
 * event-stream frames messageStart, contentBlockDelta × n, contentBlockStop, messageStop, metadata
 * (usage). The last two are the final events a `truncate` fault drops.
 */
async function converseStream(ctx: RouteContext): Promise<void> {
  const p = prepare(ctx);
  if (!p) return;
  const parts: StreamPart[] = [{ data: eventFrame('messageStart', { role: 'assistant', p: 'abcd' }) }];
  for (const text of FAKE_ANSWER_CHUNKS) {
    parts.push({ data: eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text }, p: 'abcdefgh' }) });
  }
  parts.push({ data: eventFrame('contentBlockStop', { contentBlockIndex: 0, p: 'ab' }) });
  parts.push({ data: eventFrame('messageStop', { stopReason: 'end_turn', p: 'abc' }), final: true });
  parts.push({
    data: eventFrame('metadata', {
      usage: { inputTokens: p.prompt, outputTokens: p.completion, totalTokens: p.prompt + p.completion },
      metrics: { latencyMs: 42 },
      p: 'abcdef',
    }),
    final: true,
  });
  await ctx.stream('application/vnd.amazon.eventstream', parts);
}

/**
 * `POST /model/{modelId}/invoke` for Titan Text Embeddings
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-embed-text.html):
 * `{inputText, dimensions?, normalize?}` → `{embedding, inputTextTokenCount}`; 8192 tokens at most.
 */
function invoke(ctx: RouteContext): void {
  const model = ctx.params[0] ?? '';
  if (!/titan-embed/.test(model)) {
    return awsError(
      ctx,
      400,
      'ValidationException',
      `The fake upstream only serves Titan embeddings on InvokeModel, not ${model}.`,
    );
  }
  const text = String(ctx.body['inputText'] ?? '');
  const tokens = countTextTokens('bedrock', model, text);
  if (tokens > 8192) {
    return awsError(
      ctx,
      400,
      'ValidationException',
      `400 Bad Request: Too many input tokens. Max input tokens: 8192, request input token count: ${tokens} `,
    );
  }
  const dimensions = Number(ctx.body['dimensions'] ?? (/v2/.test(model) ? 1024 : 1536));
  ctx.json(
    200,
    { embedding: fakeEmbedding(text, dimensions), embeddingsByType: {}, inputTextTokenCount: tokens },
    { 'x-amzn-bedrock-input-token-count': String(tokens) },
  );
}

/** Bedrock Runtime requires SigV4; the fake checks that a SigV4 Authorization header is present. */
const sigv4 = {
  accepts: (scheme: string | null) => scheme === 'aws-sigv4',
  reject: (ctx: RouteContext) =>
    ctx.json(
      403,
      { message: 'Missing Authentication Token' },
      { 'x-amzn-errortype': 'MissingAuthenticationTokenException' },
    ),
};

/** Amazon Bedrock Runtime routes. `{modelId}` is URI-encoded (`anthropic.claude-…-v1%3A0`). */
export const bedrockRoutes: readonly Route[] = [
  {
    name: 'bedrock.converse',
    method: 'POST',
    pattern: /^\/model\/([^/]+)\/converse$/,
    faultable: true,
    auth: sigv4,
    errors: bedrockErrors,
    handle: converse,
  },
  {
    name: 'bedrock.converse-stream',
    method: 'POST',
    pattern: /^\/model\/([^/]+)\/converse-stream$/,
    faultable: true,
    auth: sigv4,
    errors: bedrockErrors,
    handle: converseStream,
  },
  {
    name: 'bedrock.invoke',
    method: 'POST',
    pattern: /^\/model\/([^/]+)\/invoke$/,
    faultable: true,
    auth: sigv4,
    errors: bedrockErrors,
    handle: invoke,
  },
];
