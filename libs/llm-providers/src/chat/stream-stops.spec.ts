import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { createChatProvider } from '../create-chat-provider';
import { classifyUpstreamError } from '../errors/classify-upstream-error';
import { UpstreamStreamError } from '../errors/upstream-errors';
import { collect, thrown } from '../testing/chat-contract';
import type { ChatProvider, LlmSettings } from '../types';
import type { FetchLike } from '../wire/http';
import { FAKE_ANSWER, type FakeUpstream, startFakeUpstream } from '../testing/fake-upstream';
import { AnthropicChatProvider } from './anthropic-chat.provider';
import { OpenAiChatProvider } from './openai-chat.provider';

/** A fetch that answers every call with `body` (streamed as one chunk) and `contentType`. */
const canned =
  (body: string, contentType: string): FetchLike =>
  async () =>
    new Response(body, { status: 200, headers: { 'content-type': contentType } });

const request = { model: 'm', messages: [{ role: 'user' as const, content: 'q' }], maxTokens: 8 };
const make = (settings: LlmSettings, fetch: FetchLike): ChatProvider =>
  createChatProvider(
    settings,
    { apiKey: 'k', gcpAccessToken: 't' },
    {
      fetch,
      baseUrlOverrides: { openai: 'http://127.0.0.1:9/v1', vertex: 'http://127.0.0.1:9', ollama: 'http://127.0.0.1:9' },
    },
  );

describe('stream stops and in-stream errors', () => {
  it('turns an OpenAI finish_reason content_filter into a fatal content-filter failure', async () => {
    const sse = [
      `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content: 'Par' }, finish_reason: null }] })}`,
      `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'content_filter' }] })}`,
      'data: [DONE]',
      '',
    ].join('\n\n');
    const err = await thrown(() =>
      collect(make({ provider: 'openai', model: 'gpt-4o' }, canned(sse, 'text/event-stream')).streamChat(request)),
    );
    expect(err).toBeInstanceOf(UpstreamStreamError);
    expect(classifyUpstreamError(err, 'openai')).toMatchObject({ kind: 'fatal', status: 400 });
  });

  it('turns a Gemini SAFETY finish into a fatal content-filter failure', async () => {
    const sse = `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: 'a' }] }, finishReason: 'SAFETY' }] })}\r\n\r\n`;
    const err = await thrown(() =>
      collect(
        make(
          { provider: 'vertex', model: 'gemini-2.5-flash', gcpProject: 'p' },
          canned(sse, 'text/event-stream'),
        ).streamChat(request),
      ),
    );
    expect(err).toMatchObject({ reason: 'content_filter' });
    expect(classifyUpstreamError(err, 'vertex')).toMatchObject({ kind: 'fatal' });
  });

  it('classifies a Gemini error event inside the stream by its status', async () => {
    const sse = `data: ${JSON.stringify({ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } })}\r\n\r\n`;
    const err = await thrown(() =>
      collect(
        make(
          { provider: 'vertex', model: 'gemini-2.5-flash', gcpProject: 'p' },
          canned(sse, 'text/event-stream'),
        ).streamChat(request),
      ),
    );
    expect(classifyUpstreamError(err, 'vertex')).toEqual({
      kind: 'retryable',
      status: 503,
      message: 'The model is overloaded.',
    });
  });

  it('classifies an Ollama {"error"} line inside the stream as retryable', async () => {
    const ndjson = `${JSON.stringify({ message: { content: 'a' }, done: false })}\n${JSON.stringify({ error: 'an error was encountered while running the model' })}\n`;
    const err = await thrown(() =>
      collect(
        make({ provider: 'ollama', model: 'llama3.1:8b' }, canned(ndjson, 'application/x-ndjson')).streamChat(request),
      ),
    );
    expect(classifyUpstreamError(err, 'ollama')).toEqual({
      kind: 'retryable',
      status: 500,
      message: 'an error was encountered while running the model',
    });
  });

  it('calls a line that is not JSON a protocol failure, retried as 502', async () => {
    const err = await thrown(() =>
      collect(
        make({ provider: 'ollama', model: 'llama3.1:8b' }, canned('{"message":\n', 'application/x-ndjson')).streamChat(
          request,
        ),
      ),
    );
    expect(err).toMatchObject({ reason: 'protocol' });
    expect(classifyUpstreamError(err, 'ollama')).toMatchObject({ kind: 'retryable', status: 502 });
  });
});

describe('a final event at EOF without its blank line, through the SDKs', () => {
  // Why createChatProvider wraps the SDKs' fetch with sseEndOfStreamFetch: unwrapped, both SDKs drop
  // the last event when no blank line follows it, and a complete answer reads as "incomplete".
  let fake: FakeUpstream;
  beforeEach(async () => {
    fake = await startFakeUpstream();
    fake.setFault('unterminated-final', 2);
  });
  afterEach(() => fake.close());

  it('is dropped by the bare openai SDK and delivered through the wrapped one', async () => {
    const bare = new OpenAiChatProvider({
      client: new OpenAI({ baseURL: `${fake.url}/v1`, apiKey: 'k', maxRetries: 0, organization: null, project: null }),
      provider: 'openai',
      maxTokensField: 'max_completion_tokens',
    });
    expect(await thrown(() => collect(bare.streamChat({ ...request, model: 'gpt-4o' })))).toMatchObject({
      reason: 'incomplete',
    });
    const wrapped = createChatProvider(
      { provider: 'openai', model: 'gpt-4o' },
      { apiKey: 'k' },
      { baseUrlOverrides: { openai: `${fake.url}/v1` } },
    );
    expect((await collect(wrapped.streamChat({ ...request, model: 'gpt-4o' }))).text).toBe(FAKE_ANSWER);
  });

  it('is dropped by the bare Anthropic SDK and delivered through the wrapped one', async () => {
    const bare = new AnthropicChatProvider({
      client: new Anthropic({ baseURL: fake.url, apiKey: 'k', maxRetries: 0 }),
      provider: 'anthropic',
      countTokens: false,
    });
    expect(await thrown(() => collect(bare.streamChat({ ...request, model: 'claude-sonnet-4-6' })))).toMatchObject({
      reason: 'incomplete',
    });
    const wrapped = createChatProvider(
      { provider: 'anthropic', model: 'claude-sonnet-4-6' },
      { apiKey: 'k' },
      { baseUrlOverrides: { anthropic: fake.url } },
    );
    expect((await collect(wrapped.streamChat({ ...request, model: 'claude-sonnet-4-6' }))).text).toBe(FAKE_ANSWER);
  });
});
