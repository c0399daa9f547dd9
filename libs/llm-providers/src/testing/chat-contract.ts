import { normalizeUsage } from '@ask/usage-accounting';
import { AskErrorCode } from '@ask/ask-errors';
import type { ProviderId } from '@ask/model-catalog';
import { countTextTokens, FAKE_ANSWER, type FakeUpstream, startFakeUpstream } from './fake-upstream';
import { classifyUpstreamError } from '../errors/classify-upstream-error';
import { toAskError } from '../errors/to-ask-error';
import { UpstreamFailureError } from '../errors/upstream-errors';
import { type RetryNotice, streamWithRetry } from '../stream-with-retry';
import type { ChatChunk, ChatProvider, ChatRequest } from '../types';

/** A fake key planted in provider error messages; it must never come out of our errors. */
export const PLANTED_KEY = 'sk-live-PLANTED1234567890abcdefXYZ';

/** What one adapter's contract run needs. */
export interface ChatContract {
  /** The provider id the adapter reports. */
  provider: ProviderId;
  /** Model id (or Azure deployment) the fake knows the window of. */
  model: string;
  /** Builds the adapter against a running fake upstream. */
  create(fake: FakeUpstream): ChatProvider;
  /** The route name the fake records for a chat call, e.g. `openai.chat`. */
  route: string;
  /** The window the fake enforces for `model` (tokens), as disclosed in the overflow error. */
  window: number;
  /** Whether the provider's overflow error discloses the limit and the count (Bedrock's does not). */
  disclosesCounts?: boolean;
  /** Whether the overflow count is prompt + max_tokens (vLLM, Anthropic's second form). */
  countsCompletion?: boolean;
  /** Prompt padding to overflow the window; default `window + 2000` one-token words. */
  overflowWords?: number;
  /** Writes before the fake drops the connection (enough for at least one delta); default 3. */
  disconnectAfter?: number;
}

/** Collects a stream: the text, the deltas, the usage chunk. */
export async function collect(
  stream: AsyncIterable<ChatChunk>,
): Promise<{ text: string; deltas: number; usage?: Extract<ChatChunk, { type: 'usage' }> }> {
  let text = '';
  let deltas = 0;
  let usage: Extract<ChatChunk, { type: 'usage' }> | undefined;
  for await (const chunk of stream) {
    if (chunk.type === 'delta') {
      text += chunk.text;
      deltas++;
    } else usage = chunk;
  }
  return { text, deltas, usage };
}

/** Runs `fn` and returns what it threw (fails the test when nothing was thrown). */
export async function thrown(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to throw');
}

/**
 * The contract every chat adapter passes against the fake upstream: a streamed answer
 * arrives whole; usage is read; an overflow classifies as overflow with limit/actual; a 429 is retried
 * then succeeds; a content-filter 400 gives 502 with sanitised details; a stall gives 504; a
 * mid-stream disconnect and a stream without its final event give typed errors; a stream whose
 * completing event ends at EOF without its blank line is a whole answer.
 */
export function chatContract(c: ChatContract): void {
  let fake: FakeUpstream;
  let provider: ChatProvider;
  const request = (over: Partial<ChatRequest> = {}): ChatRequest => ({
    model: c.model,
    messages: [
      { role: 'system', content: 'Answer from the context only.' },
      { role: 'user', content: 'What does the fake upstream stream?' },
    ],
    maxTokens: 256,
    ...over,
  });

  // The fake's tokenizer for this model loads once (1-8 s); load it outside the timed tests.
  beforeAll(() => {
    countTextTokens(c.provider, c.model, 'warm up');
    countTextTokens(c.provider, c.model, 'warm up', 'http://gateway');
  }, 60000);
  beforeEach(async () => {
    fake = await startFakeUpstream();
    provider = c.create(fake);
  });
  afterEach(async () => {
    await fake.close();
  });

  it('streams the answer whole, in several deltas', async () => {
    const { text, deltas } = await collect(provider.streamChat(request()));
    expect(text).toBe(FAKE_ANSWER);
    expect(deltas).toBeGreaterThanOrEqual(4);
    expect(fake.requests.map((r) => r.route)).toContain(c.route);
  });

  it('reads usage as the provider reports it', async () => {
    const { usage } = await collect(provider.streamChat(request()));
    const sent = fake.requests.find((r) => r.route === c.route);
    expect(usage?.promptTokens).toBe(sent?.promptTokens);
    expect(usage?.completionTokens).toBeGreaterThan(0);
  });

  it("carries the provider's raw usage, which normalises to the same prompt and completion tokens", async () => {
    const { usage } = await collect(provider.streamChat(request()));
    const sent = fake.requests.find((r) => r.route === c.route);
    expect(usage?.convention).toBeDefined();
    const normalized = normalizeUsage(usage!.convention!, usage!.raw);
    expect(normalized?.input).toBe(sent?.promptTokens);
    expect(normalized?.output).toBe(usage?.completionTokens);
    expect(usage?.finishReason).toBeDefined();
  });

  it('classifies an oversize prompt as overflow with the disclosed limit and count', async () => {
    const words = c.overflowWords ?? c.window + 2000;
    const big = request({ messages: [{ role: 'user', content: 'hello '.repeat(words) }] });
    const err = await thrown(() => collect(provider.streamChat(big)));
    const failure = classifyUpstreamError(err, c.provider);
    expect(failure.kind).toBe('overflow');
    if (failure.kind !== 'overflow') return;
    if (c.disclosesCounts === false) {
      expect(failure.limit).toBeUndefined();
      return;
    }
    const counted = fake.requests.find((r) => r.route === c.route)?.promptTokens ?? NaN;
    expect(failure.limit).toBe(c.window);
    expect(failure.actual).toBe(c.countsCompletion ? counted + big.maxTokens : counted);
  }, 30000);

  it('retries a 429 after its retry-after, then streams the answer', async () => {
    fake.setFault({ kind: '429', retryAfterSeconds: 1 });
    const notices: RetryNotice[] = [];
    const { text } = await collect(streamWithRetry(provider, request(), { onRetry: (n) => notices.push(n) }));
    expect(text).toBe(FAKE_ANSWER);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({ attempt: 1, delayMs: 1000, failure: { kind: 'retryable', status: 429 } });
    expect(fake.requests.filter((r) => r.route === c.route)).toHaveLength(2);
  });

  it('maps a content-filter 400 to 502 llm_upstream with the key removed from details', async () => {
    fake.setFault({
      kind: 'content-filter',
      message: `Request blocked by content policy (debug: api key ${PLANTED_KEY})`,
    });
    const methods = ['log', 'info', 'warn', 'error', 'debug'] as const;
    const spies = methods.map((m) => jest.spyOn(console, m).mockImplementation(() => undefined));
    const err = await thrown(() => collect(streamWithRetry(provider, request())));
    const logged = JSON.stringify(spies.map((s) => s.mock.calls));
    spies.forEach((s) => s.mockRestore());
    expect(logged).not.toContain('PLANTED');
    expect(err).toBeInstanceOf(UpstreamFailureError);
    const failure = (err as UpstreamFailureError).failure;
    expect(failure.kind).toBe('fatal');
    const ask = toAskError(failure);
    expect(ask.status).toBe(502);
    expect(ask.code).toBe(AskErrorCode.LlmUpstream);
    expect(ask.details).toContain('content policy');
    const everything = JSON.stringify({ body: ask.toBody(), message: ask.message, failure });
    expect(everything).not.toContain('PLANTED');
    expect(fake.requests.filter((r) => r.route === c.route)).toHaveLength(1);
  });

  it('gives 504 when the provider stalls past the deadline', async () => {
    fake.setFault('stall');
    const err = await thrown(() => collect(streamWithRetry(provider, request({ signal: AbortSignal.timeout(300) }))));
    const failure = (err as UpstreamFailureError).failure;
    expect(failure).toEqual({ kind: 'timeout' });
    expect(toAskError(failure).status).toBe(504);
  });

  it('gives a typed error, without a silent restart, when the connection drops mid-stream', async () => {
    fake.setFault({ kind: 'disconnect', afterChunks: c.disconnectAfter ?? 3 });
    let text = '';
    const err = await thrown(async () => {
      for await (const chunk of streamWithRetry(provider, request())) if (chunk.type === 'delta') text += chunk.text;
    });
    expect(err).toBeInstanceOf(UpstreamFailureError);
    const failure = err as UpstreamFailureError;
    expect(text.length).toBeGreaterThan(0);
    expect(text.length).toBeLessThan(FAKE_ANSWER.length);
    expect(failure.streamed).toBe(true);
    expect(failure.failure).toMatchObject({ kind: 'retryable', status: 502 });
    expect(toAskError(failure.failure).status).toBe(502);
    expect(fake.requests.filter((r) => r.route === c.route)).toHaveLength(1);
  });

  it('accepts a stream whose completing event is its last bytes, with no blank line after it', async () => {
    fake.setFault('unterminated-final');
    const { text, usage } = await collect(provider.streamChat(request()));
    expect(text).toBe(FAKE_ANSWER);
    expect(usage?.type).toBe('usage');
    expect(fake.requests.filter((r) => r.route === c.route).map((r) => r.fault)).toEqual(['unterminated-final']);
  });

  it('gives a typed error when the stream ends without its final event', async () => {
    fake.setFault('truncate');
    const err = await thrown(() => collect(provider.streamChat(request())));
    const failure = classifyUpstreamError(err, c.provider);
    expect(failure).toMatchObject({ kind: 'retryable', status: 502 });
  });
}
