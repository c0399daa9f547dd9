import Anthropic from '@anthropic-ai/sdk';
import { ThrottlingException, ValidationException } from '@aws-sdk/client-bedrock-runtime';
import OpenAI from 'openai';
import { classifyUpstreamError, describeUpstreamError, matchOverflow, OVERFLOW_FORMS } from './classify-upstream-error';
import { EmbeddingShapeError, UpstreamHttpError, UpstreamStreamError } from './upstream-errors';

const PLANTED = 'sk-live-PLANTED1234567890abcdef';
const headers = (h: Record<string, string> = {}) => new Headers(h);
const openAi400 = (error: object) => new OpenAI.BadRequestError(400, error, undefined, headers());
const http = (provider: 'vertex' | 'ollama', status: number, body: unknown, h: Record<string, string> = {}) =>
  new UpstreamHttpError(provider, status, typeof body === 'string' ? body : JSON.stringify(body), h);

describe('classifyUpstreamError', () => {
  describe('context overflow, one case per provider form', () => {
    it.each([
      [
        'OpenAI context_length_exceeded',
        openAi400({
          message:
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.",
          type: 'invalid_request_error',
          param: 'messages',
          code: 'context_length_exceeded',
        }),
        'openai',
        { limit: 128000, actual: 130512 },
      ],
      [
        'Azure "Input tokens exceed the configured limit" (the wording is the only hint: no code, no type)',
        openAi400({
          message:
            'Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 305127 tokens. Please reduce the length of the messages.',
        }),
        'azure-foundry',
        { limit: 272000, actual: 305127 },
      ],
      [
        'Anthropic "prompt is too long: N tokens > M maximum"',
        new Anthropic.BadRequestError(
          400,
          {
            type: 'error',
            error: { type: 'invalid_request_error', message: 'prompt is too long: 208310 tokens > 200000 maximum' },
          },
          undefined,
          headers(),
        ),
        'anthropic',
        { limit: 200000, actual: 208310 },
      ],
      [
        'Anthropic "input length and `max_tokens` exceed context limit"',
        new Anthropic.BadRequestError(
          400,
          {
            type: 'error',
            error: {
              type: 'invalid_request_error',
              message:
                'input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length or `max_tokens` and try again',
            },
          },
          undefined,
          headers(),
        ),
        'anthropic',
        { limit: 200000, actual: 205192 },
      ],
      [
        'Bedrock ValidationException "Input is too long for requested model."',
        new ValidationException({
          message: 'Input is too long for requested model.',
          $metadata: { httpStatusCode: 400 },
        }),
        'bedrock',
        {},
      ],
      [
        'Bedrock ValidationException "Too many input tokens" (Titan)',
        new ValidationException({
          message: '400 Bad Request: Too many input tokens. Max input tokens: 8192, request input token count: 9012 ',
          $metadata: { httpStatusCode: 400 },
        }),
        'bedrock',
        { limit: 8192, actual: 9012 },
      ],
      [
        'Gemini 400 INVALID_ARGUMENT "The input token count (N) exceeds the maximum number of tokens allowed (M)."',
        http('vertex', 400, {
          error: {
            code: 400,
            message: 'The input token count (1196265) exceeds the maximum number of tokens allowed (1000000).',
            status: 'INVALID_ARGUMENT',
          },
        }),
        'vertex',
        { limit: 1000000, actual: 1196265 },
      ],
      [
        'Ollama 400 with truncate:false (llama.cpp body nested in a string)',
        http('ollama', 400, {
          error: JSON.stringify({
            error: {
              code: 400,
              message: 'request (8889 tokens) exceeds the available context size (4096 tokens), try increasing it',
              type: 'exceed_context_size_error',
              n_prompt_tokens: 8889,
              n_ctx: 4096,
            },
          }),
        }),
        'ollama',
        { limit: 4096, actual: 8889 },
      ],
      [
        'Ollama 400 with shift:false',
        http('ollama', 400, {
          error:
            'the prompt is longer than the context length currently available to the model; try increasing num_ctx',
        }),
        'ollama',
        {},
      ],
      [
        'vLLM "maximum context length is N tokens. However, you requested M tokens"',
        openAi400({
          object: 'error',
          message:
            "This model's maximum context length is 32768 tokens. However, you requested 33000 tokens (32000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
          type: 'BadRequestError',
          param: null,
          code: 400,
        }),
        'openai',
        { limit: 32768, actual: 33000 },
      ],
      [
        'llama.cpp "the request exceeds the available context size" with n_ctx / n_prompt_tokens',
        openAi400({
          code: 400,
          message: 'the request exceeds the available context size, try increasing it',
          type: 'exceed_context_size_error',
          n_prompt_tokens: 5120,
          n_ctx: 4096,
        }),
        'openai',
        { limit: 4096, actual: 5120 },
      ],
    ] as const)('%s', (_name, err, provider, expected) => {
      const failure = classifyUpstreamError(err, provider);
      expect(failure.kind).toBe('overflow');
      expect({ limit: (failure as { limit?: number }).limit, actual: (failure as { actual?: number }).actual }).toEqual(
        {
          limit: (expected as { limit?: number }).limit,
          actual: (expected as { actual?: number }).actual,
        },
      );
    });

    it('never calls a Gemini 400 overflow retryable', () => {
      const err = http('vertex', 400, {
        error: {
          code: 400,
          message: 'The input token count (2845475) exceeds the maximum number of tokens allowed (1048576).',
          status: 'INVALID_ARGUMENT',
        },
      });
      const failure = classifyUpstreamError(err, 'vertex');
      expect(failure).toEqual({
        kind: 'overflow',
        limit: 1048576,
        actual: 2845475,
        promptTokens: 2845475,
        message: 'The input token count (2845475) exceeds the maximum number of tokens allowed (1048576).',
      });
    });

    it('does not read a throttle that mentions tokens as an overflow', () => {
      const err = new ThrottlingException({
        message: 'Too many tokens, please wait before trying again.',
        $metadata: { httpStatusCode: 429 },
      });
      expect(classifyUpstreamError(err, 'bedrock')).toMatchObject({ kind: 'retryable', status: 429 });
    });

    it.each([
      [
        'OpenAI "your messages resulted in"',
        openAi400({
          message:
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 8732 tokens. Please reduce the length of the messages.",
          code: 'context_length_exceeded',
        }),
        'openai',
        { limit: 8192, actual: 8732, promptTokens: 8732 },
      ],
      [
        'vLLM "(P in the messages, C in the completion)"',
        openAi400({
          object: 'error',
          message:
            "This model's maximum context length is 32768 tokens. However, you requested 33000 tokens (32000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
          code: 400,
        }),
        'openai',
        { limit: 32768, actual: 33000, promptTokens: 32000 },
      ],
      [
        'Anthropic "input length and `max_tokens`": the prompt is the first term',
        new Anthropic.BadRequestError(
          400,
          {
            type: 'error',
            error: {
              type: 'invalid_request_error',
              message:
                'input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000, decrease input length or `max_tokens` and try again',
            },
          },
          undefined,
          headers(),
        ),
        'anthropic',
        { limit: 200000, actual: 205192, promptTokens: 197000 },
      ],
      [
        'Bedrock Converse relaying Anthropic "prompt is too long"',
        new ValidationException({
          message: 'prompt is too long: 210544 tokens > 200000 maximum',
          $metadata: { httpStatusCode: 400 },
        }),
        'bedrock',
        { limit: 200000, actual: 210544, promptTokens: 210544 },
      ],
      [
        'Vertex Gemini "input token count"',
        http('vertex', 400, {
          error: {
            code: 400,
            message: 'The input token count (1196265) exceeds the maximum number of tokens allowed (1000000).',
            status: 'INVALID_ARGUMENT',
          },
        }),
        'vertex',
        { limit: 1000000, actual: 1196265, promptTokens: 1196265 },
      ],
      [
        'Ollama (llama.cpp body nested in a string)',
        http('ollama', 400, {
          error: JSON.stringify({
            error: {
              code: 400,
              message: 'request (8889 tokens) exceeds the available context size (4096 tokens), try increasing it',
              type: 'exceed_context_size_error',
              n_prompt_tokens: 8889,
              n_ctx: 4096,
            },
          }),
        }),
        'ollama',
        { limit: 4096, actual: 8889, promptTokens: 8889 },
      ],
      [
        'llama-server 500 "Context size has been exceeded." with n_prompt_tokens / n_ctx',
        new OpenAI.InternalServerError(
          500,
          {
            code: 500,
            message: 'Context size has been exceeded.',
            type: 'server_error',
            n_prompt_tokens: 8732,
            n_ctx: 8192,
          },
          undefined,
          headers(),
        ),
        'openai',
        { limit: 8192, actual: 8732, promptTokens: 8732 },
      ],
      [
        'llama-server 500 "Context size has been exceeded." without figures',
        new OpenAI.InternalServerError(
          500,
          { code: 500, message: 'Context size has been exceeded.', type: 'server_error' },
          undefined,
          headers(),
        ),
        'openai',
        {},
      ],
    ] as const)('reads the prompt tokens the provider disclosed: %s', (_name, err, provider, expected) => {
      const {
        kind,
        message: _message,
        ...figures
      } = classifyUpstreamError(err, provider) as { kind: string; message: string };
      expect(kind).toBe('overflow');
      expect(figures).toEqual(expected);
    });

    it('calls OpenAI\'s 429 "Request too large … Limit N, Requested M" a fatal 429 above the per-minute limit: no window, no retry', () => {
      const err = new OpenAI.RateLimitError(
        429,
        {
          message:
            'Request too large for gpt-4o in organization org-abc on tokens per min (TPM): Limit 30000, Requested 30182. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.',
          type: 'tokens',
          param: null,
          code: 'rate_limit_exceeded',
        },
        undefined,
        headers(),
      );
      // Not an overflow: 30,000 is the organisation's tokens-per-minute limit, not gpt-4o's window.
      expect(classifyUpstreamError(err, 'openai')).toEqual({
        kind: 'fatal',
        status: 429,
        message:
          "openai: the request (30182 tokens, prompt plus max_tokens) is larger than the organisation's tokens-per-minute limit (30000); lower maxTokens or raise the provider's rate limit",
      });
      expect(matchOverflow(describeUpstreamError(err))).toBeUndefined();
    });

    it('still retries an ordinary per-minute 429 that names tokens', () => {
      const err = new OpenAI.RateLimitError(
        429,
        {
          message:
            'Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2s.',
          code: 'rate_limit_exceeded',
        },
        undefined,
        headers({ 'retry-after': '2' }),
      );
      expect(classifyUpstreamError(err, 'openai')).toMatchObject({
        kind: 'retryable',
        status: 429,
        retryAfterMs: 2000,
      });
    });

    it('has one documented source per form', () => {
      expect(OVERFLOW_FORMS.every((f) => f.source.length > 20)).toBe(true);
    });
  });

  describe('retryable', () => {
    it('reads retry-after-ms before retry-after on a 429', () => {
      const err = new OpenAI.RateLimitError(
        429,
        { message: 'Rate limit reached', code: 'rate_limit_exceeded' },
        undefined,
        headers({ 'retry-after': '2', 'retry-after-ms': '1500' }),
      );
      expect(classifyUpstreamError(err, 'openai')).toEqual({
        kind: 'retryable',
        status: 429,
        retryAfterMs: 1500,
        message: 'Rate limit reached',
      });
    });

    it('reads retry-after seconds on a 503', () => {
      expect(
        classifyUpstreamError(
          http(
            'vertex',
            503,
            { error: { code: 503, message: 'The service is currently unavailable.', status: 'UNAVAILABLE' } },
            { 'retry-after': '3' },
          ),
          'vertex',
        ),
      ).toEqual({
        kind: 'retryable',
        status: 503,
        retryAfterMs: 3000,
        message: 'The service is currently unavailable.',
      });
    });

    it('retries Anthropic overloaded_error sent inside a stream (no HTTP status)', () => {
      const err = new Anthropic.APIError(
        undefined,
        { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
        undefined,
        headers(),
      );
      expect(classifyUpstreamError(err, 'anthropic')).toEqual({
        kind: 'retryable',
        status: 529,
        message: 'Overloaded',
      });
    });

    it('retries a stream that ended without its final event, as 502', () => {
      expect(
        classifyUpstreamError(
          new UpstreamStreamError('ollama', 'incomplete', 'ollama: the stream ended without done: true'),
          'ollama',
        ),
      ).toEqual({
        kind: 'retryable',
        status: 502,
        message: 'ollama: the stream ended without done: true',
      });
    });

    it('retries a dropped connection (undici "terminated")', () => {
      const err = new TypeError('terminated', {
        cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
      });
      expect(classifyUpstreamError(err, 'vertex')).toMatchObject({ kind: 'retryable', status: 502 });
    });
  });

  describe('fatal', () => {
    it('treats an Azure content filter 400 as fatal and sanitises the planted key', () => {
      const err = openAi400({
        message: `The response was filtered due to the prompt triggering Azure OpenAI's content management policy. key=${PLANTED}`,
        type: null,
        param: 'prompt',
        code: 'content_filter',
        status: 400,
      });
      const failure = classifyUpstreamError(err, 'azure-foundry');
      expect(failure).toMatchObject({ kind: 'fatal', status: 400 });
      expect(JSON.stringify(failure)).not.toContain('PLANTED');
    });

    it('treats auth, billing and other 4xx as fatal', () => {
      expect(
        classifyUpstreamError(
          new OpenAI.AuthenticationError(
            401,
            { message: 'Incorrect API key provided: sk-abc…xyz' },
            undefined,
            headers(),
          ),
          'openai',
        ),
      ).toMatchObject({ kind: 'fatal', status: 401 });
      expect(
        classifyUpstreamError(
          new OpenAI.RateLimitError(
            429,
            { message: 'You exceeded your current quota', code: 'insufficient_quota' },
            undefined,
            headers(),
          ),
          'openai',
        ),
      ).toMatchObject({ kind: 'fatal', status: 429 });
      expect(
        classifyUpstreamError(
          http('vertex', 403, { error: { code: 403, message: 'Permission denied', status: 'PERMISSION_DENIED' } }),
          'vertex',
        ),
      ).toMatchObject({ kind: 'fatal', status: 403 });
    });

    it('treats an embedding of the wrong length as fatal 502', () => {
      const err = new EmbeddingShapeError('ollama', { vectors: 1, dimensions: 1024 }, { vectors: 1, dimensions: 768 });
      expect(classifyUpstreamError(err, 'ollama')).toMatchObject({ kind: 'fatal', status: 502 });
    });
  });

  describe('timeout and unknown', () => {
    it('calls an AbortError or TimeoutError a timeout', () => {
      expect(
        classifyUpstreamError(new DOMException('The operation was aborted due to timeout', 'TimeoutError'), 'openai'),
      ).toEqual({ kind: 'timeout' });
      expect(classifyUpstreamError(new OpenAI.APIUserAbortError(), 'openai')).toEqual({ kind: 'timeout' });
    });

    it('calls anything else unknown, sanitised', () => {
      expect(classifyUpstreamError(new Error(`boom Bearer ${PLANTED}`), 'anthropic')).toEqual({
        kind: 'unknown',
        message: 'boom Bearer ***',
      });
    });
  });
});

describe('describeUpstreamError', () => {
  it('keeps the provider message and drops the SDK JSON echo', () => {
    const err = new Anthropic.BadRequestError(
      400,
      { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: must be positive' } },
      undefined,
      headers(),
    );
    expect(describeUpstreamError(err)).toMatchObject({
      status: 400,
      message: 'max_tokens: must be positive',
      codes: ['invalid_request_error'],
    });
  });
});
