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
import {
  anthropicError,
  anthropicMessage,
  anthropicMessages,
  anthropicOverflow,
  anthropicStream,
} from './anthropic.routes';
import { openAiChat, openAiPersona } from './openai.routes';

/** Google's error envelope (https://cloud.google.com/apis/design/errors#http_mapping). */
const googleError = (code: number, status: string, message: string) => ({ error: { code, message, status } });

const googleErrors: ErrorPersona = {
  rateLimited(ctx, seconds) {
    ctx.json(
      429,
      googleError(
        429,
        'RESOURCE_EXHAUSTED',
        'Resource exhausted. Please try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.',
      ),
      { 'retry-after': String(seconds) },
    );
  },
  serverError(ctx) {
    ctx.json(500, googleError(500, 'INTERNAL', 'Internal error encountered.'));
  },
  contentFilter(ctx, message) {
    ctx.json(
      400,
      googleError(
        400,
        'INVALID_ARGUMENT',
        message ?? 'The request was blocked by the content filter (blockReason: SAFETY).',
      ),
    );
  },
  overflow(ctx, promptTokens, window) {
    ctx.json(
      400,
      googleError(
        400,
        'INVALID_ARGUMENT',
        `The input token count (${promptTokens}) exceeds the maximum number of tokens allowed (${window}).`,
      ),
    );
  },
};

const PATH = '^/v1/projects/([^/]+)/locations/([^/]+)';

/** The Gemini prompt: `systemInstruction.parts`, then `contents[].parts` (role `user` / `model`). */
function geminiMessages(body: Record<string, unknown>): FakeMessage[] {
  const out: FakeMessage[] = [];
  const system = body['systemInstruction'] as { parts?: unknown } | undefined;
  const systemText = textOf(system?.parts);
  if (systemText) out.push({ role: 'system', content: systemText });
  const contents = Array.isArray(body['contents']) ? (body['contents'] as Array<Record<string, unknown>>) : [];
  for (const c of contents) out.push({ role: String(c['role'] ?? 'user'), content: textOf(c['parts']) });
  return out;
}

/**
 * Counts a Gemini prompt; answers the 400 INVALID_ARGUMENT "The input token count (N) exceeds the
 * maximum number of tokens allowed (M)." when it does not fit the catalog window.
 */
function prepareGemini(ctx: RouteContext): { model: string; prompt: number; completion: number } | undefined {
  const model = ctx.params[2] ?? '';
  const prompt = countPromptTokens('vertex', model, geminiMessages(ctx.body));
  ctx.record.promptTokens = prompt;
  const window = windowOf('vertex', model);
  if (prompt > window) {
    ctx.json(
      400,
      googleError(
        400,
        'INVALID_ARGUMENT',
        `The input token count (${prompt}) exceeds the maximum number of tokens allowed (${window}).`,
      ),
    );
    return undefined;
  }
  return { model, prompt, completion: countTextTokens('vertex', model, FAKE_ANSWER) };
}

const usage = (prompt: number, completion: number) => ({
  promptTokenCount: prompt,
  candidatesTokenCount: completion,
  totalTokenCount: prompt + completion,
  trafficType: 'ON_DEMAND',
});

/**
 * `:streamGenerateContent?alt=sse` (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference):
 * SSE `GenerateContentResponse` chunks with `candidates[0].content.parts[].text`; the last chunk carries
 * `finishReason: STOP` and the full `usageMetadata` (the final event a `truncate` fault drops).
 */
async function streamGenerate(ctx: RouteContext): Promise<void> {
  if (ctx.url.searchParams.get('alt') !== 'sse') {
    return ctx.json(
      400,
      googleError(400, 'INVALID_ARGUMENT', 'The fake upstream serves streamGenerateContent with alt=sse only.'),
    );
  }
  const p = prepareGemini(ctx);
  if (!p) return;
  const chunk = (payload: object) =>
    `data: ${JSON.stringify({ ...payload, modelVersion: p.model, responseId: 'fake-response' })}\r\n\r\n`;
  const parts: StreamPart[] = FAKE_ANSWER_CHUNKS.map((text) => ({
    data: chunk({
      candidates: [{ content: { role: 'model', parts: [{ text }] } }],
      usageMetadata: { promptTokenCount: p.prompt, trafficType: 'ON_DEMAND' },
    }),
  }));
  parts.push({
    data: chunk({
      candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP' }],
      usageMetadata: usage(p.prompt, p.completion),
    }),
    final: true,
    completes: true,
  });
  await ctx.stream('text/event-stream', parts);
}

/** `:generateContent`: the whole answer in one `GenerateContentResponse`. */
function generate(ctx: RouteContext): void {
  const p = prepareGemini(ctx);
  if (!p) return;
  ctx.json(200, {
    candidates: [{ content: { role: 'model', parts: [{ text: FAKE_ANSWER }] }, finishReason: 'STOP' }],
    usageMetadata: usage(p.prompt, p.completion),
    modelVersion: p.model,
  });
}

/** `:countTokens` (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/count-tokens). */
function countTokens(ctx: RouteContext): void {
  const model = ctx.params[2] ?? '';
  const messages = geminiMessages(ctx.body);
  const prompt = countPromptTokens('vertex', model, messages);
  ctx.record.promptTokens = prompt;
  ctx.json(200, {
    totalTokens: prompt,
    totalBillableCharacters: messages.reduce((s, m) => s + m.content.replace(/\s/g, '').length, 0),
  });
}

/** Default vector length per Vertex text-embedding model (https://cloud.google.com/vertex-ai/generative-ai/docs/embeddings/get-text-embeddings). */
function defaultDimensions(model: string): number {
  return /gemini-embedding/.test(model) ? 3072 : 768;
}

/** `:predict` on a text-embedding model: `{instances:[{content}], parameters:{outputDimensionality}}`. */
function predict(ctx: RouteContext): void {
  const model = ctx.params[2] ?? '';
  const instances = Array.isArray(ctx.body['instances'])
    ? (ctx.body['instances'] as Array<Record<string, unknown>>)
    : [];
  const parameters = (ctx.body['parameters'] ?? {}) as Record<string, unknown>;
  const dimensions =
    typeof parameters['outputDimensionality'] === 'number'
      ? parameters['outputDimensionality']
      : defaultDimensions(model);
  const predictions = instances.map((i) => {
    const text = String(i['content'] ?? '');
    const tokens = countTextTokens('vertex', model, text);
    return {
      embeddings: { values: fakeEmbedding(text, dimensions), statistics: { truncated: false, token_count: tokens } },
    };
  });
  ctx.json(200, {
    predictions,
    metadata: { billableCharacterCount: instances.reduce((s, i) => s + String(i['content'] ?? '').length, 0) },
  });
}

/**
 * Claude on Vertex (`publishers/anthropic/models/{model}:streamRawPredict` / `:rawPredict`,
 * https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude): the Anthropic wire with
 * `anthropic_version: "vertex-2023-10-16"` in the body and no `model` field.
 */
function rawPredict(stream: boolean) {
  return async (ctx: RouteContext): Promise<void> => {
    const model = ctx.params[2] ?? '';
    if (ctx.body['anthropic_version'] !== 'vertex-2023-10-16') {
      return ctx.json(400, anthropicError('invalid_request_error', 'anthropic_version: must be vertex-2023-10-16'));
    }
    const prompt = countPromptTokens('vertex', model, anthropicMessages(ctx.body));
    ctx.record.promptTokens = prompt;
    const over = anthropicOverflow(prompt, Number(ctx.body['max_tokens'] ?? 0), windowOf('vertex', model));
    if (over) return ctx.json(400, over);
    const completion = countTextTokens('vertex', model, FAKE_ANSWER);
    if (!stream || ctx.body['stream'] !== true) return ctx.json(200, anthropicMessage(model, prompt, completion));
    await ctx.stream('text/event-stream; charset=utf-8', anthropicStream(model, prompt, completion), 4);
  };
}

const claudeOnVertexErrors: ErrorPersona = {
  rateLimited: googleErrors.rateLimited,
  serverError: googleErrors.serverError,
  contentFilter(ctx, message) {
    ctx.json(400, anthropicError('invalid_request_error', message ?? 'Output blocked by content filtering policy'));
  },
};

/** Vertex takes an OAuth 2 access token (ADC, service account, or gcloud) as a bearer. */
const bearer = {
  accepts: (scheme: string | null) => scheme === 'bearer',
  reject: (ctx: RouteContext) =>
    ctx.json(
      401,
      googleError(
        401,
        'UNAUTHENTICATED',
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      ),
    ),
};

const gemini = (method: string) => new RegExp(`${PATH}/publishers/google/models/([^/:]+):${method}$`);
const claude = (method: string) => new RegExp(`${PATH}/publishers/anthropic/models/([^/:]+):${method}$`);

/** Vertex AI routes: Gemini, Claude (rawPredict), the OpenAI-compatible MaaS endpoint, text embeddings. */
export const vertexRoutes: readonly Route[] = [
  {
    name: 'vertex.gemini.stream',
    method: 'POST',
    pattern: gemini('streamGenerateContent'),
    faultable: true,
    auth: bearer,
    errors: googleErrors,
    handle: streamGenerate,
  },
  {
    name: 'vertex.gemini.generate',
    method: 'POST',
    pattern: gemini('generateContent'),
    faultable: true,
    auth: bearer,
    errors: googleErrors,
    handle: generate,
  },
  {
    name: 'vertex.gemini.count',
    method: 'POST',
    pattern: gemini('countTokens'),
    faultable: false,
    auth: bearer,
    errors: googleErrors,
    handle: countTokens,
  },
  {
    name: 'vertex.predict',
    method: 'POST',
    pattern: gemini('predict'),
    faultable: true,
    auth: bearer,
    errors: googleErrors,
    handle: predict,
  },
  {
    name: 'vertex.claude.stream',
    method: 'POST',
    pattern: claude('streamRawPredict'),
    faultable: true,
    auth: bearer,
    errors: claudeOnVertexErrors,
    handle: rawPredict(true),
  },
  {
    name: 'vertex.claude.raw',
    method: 'POST',
    pattern: claude('rawPredict'),
    faultable: true,
    auth: bearer,
    errors: claudeOnVertexErrors,
    handle: rawPredict(false),
  },
  {
    name: 'vertex.maas.chat',
    method: 'POST',
    pattern: new RegExp(`${PATH}/endpoints/openapi/chat/completions$`),
    faultable: true,
    auth: bearer,
    errors: { ...openAiPersona('vllm'), rateLimited: googleErrors.rateLimited },
    handle: openAiChat('vllm', 'vertex', (ctx) => String(ctx.body['model'] ?? '')),
  },
];
