import { createChatProvider } from '../create-chat-provider';
import { classifyUpstreamError } from '../errors/classify-upstream-error';
import { UpstreamStreamError } from '../errors/upstream-errors';
import { collect, thrown } from '../testing/chat-contract';
import type { ChatProvider, LlmSettings } from '../types';
import type { FetchLike } from '../wire/http';

/** A fetch that answers every call with `body` (streamed as one chunk) and `contentType`. */
const canned =
  (body: string, contentType: string): FetchLike =>
  async () =>
    new Response(body, { status: 200, headers: { 'content-type': contentType } });

const request = { model: 'm', messages: [{ role: 'user' as const, content: 'q' }], maxTokens: 8 };
const make = (settings: LlmSettings, fetch: FetchLike): ChatProvider =>
  createChatProvider(settings, { apiKey: 'k', gcpAccessToken: 't' }, { fetch, baseUrlOverrides: { openai: 'http://127.0.0.1:9/v1', vertex: 'http://127.0.0.1:9', ollama: 'http://127.0.0.1:9' } });

describe('stream stops and in-stream errors', () => {
  it('turns an OpenAI finish_reason content_filter into a fatal content-filter failure', async () => {
    const sse = [
      `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content: 'Par' }, finish_reason: null }] })}`,
      `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'content_filter' }] })}`,
      'data: [DONE]',
      '',
    ].join('\n\n');
    const err = await thrown(() => collect(make({ provider: 'openai', model: 'gpt-4o' }, canned(sse, 'text/event-stream')).streamChat(request)));
    expect(err).toBeInstanceOf(UpstreamStreamError);
    expect(classifyUpstreamError(err, 'openai')).toMatchObject({ kind: 'fatal', status: 400 });
  });

  it('turns a Gemini SAFETY finish into a fatal content-filter failure', async () => {
    const sse = `data: ${JSON.stringify({ candidates: [{ content: { parts: [{ text: 'a' }] }, finishReason: 'SAFETY' }] })}\r\n\r\n`;
    const err = await thrown(() => collect(make({ provider: 'vertex', model: 'gemini-2.5-flash', gcpProject: 'p' }, canned(sse, 'text/event-stream')).streamChat(request)));
    expect(err).toMatchObject({ reason: 'content_filter' });
    expect(classifyUpstreamError(err, 'vertex')).toMatchObject({ kind: 'fatal' });
  });

  it('classifies a Gemini error event inside the stream by its status', async () => {
    const sse = `data: ${JSON.stringify({ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } })}\r\n\r\n`;
    const err = await thrown(() => collect(make({ provider: 'vertex', model: 'gemini-2.5-flash', gcpProject: 'p' }, canned(sse, 'text/event-stream')).streamChat(request)));
    expect(classifyUpstreamError(err, 'vertex')).toEqual({ kind: 'retryable', status: 503, message: 'The model is overloaded.' });
  });

  it('classifies an Ollama {"error"} line inside the stream as retryable', async () => {
    const ndjson = `${JSON.stringify({ message: { content: 'a' }, done: false })}\n${JSON.stringify({ error: 'an error was encountered while running the model' })}\n`;
    const err = await thrown(() => collect(make({ provider: 'ollama', model: 'llama3.1:8b' }, canned(ndjson, 'application/x-ndjson')).streamChat(request)));
    expect(classifyUpstreamError(err, 'ollama')).toEqual({ kind: 'retryable', status: 500, message: 'an error was encountered while running the model' });
  });

  it('calls a line that is not JSON a protocol failure, retried as 502', async () => {
    const err = await thrown(() => collect(make({ provider: 'ollama', model: 'llama3.1:8b' }, canned('{"message":\n', 'application/x-ndjson')).streamChat(request)));
    expect(err).toMatchObject({ reason: 'protocol' });
    expect(classifyUpstreamError(err, 'ollama')).toMatchObject({ kind: 'retryable', status: 502 });
  });
});
