import { UpstreamFailureError, UpstreamHttpError } from './errors/upstream-errors';
import { retryDelayMs, type RetryNotice, streamWithRetry } from './stream-with-retry';
import { collect, thrown } from './testing/chat-contract';
import type { ChatChunk, ChatProvider, ChatRequest } from './types';

type Step = ChatChunk | Error;

/** A provider that plays one script per attempt: chunks, and an error where one is scripted. */
function scripted(...attempts: Step[][]): ChatProvider & { calls: number } {
  const provider = {
    provider: 'vertex' as const,
    calls: 0,
    async *streamChat(): AsyncGenerator<ChatChunk> {
      const script = attempts[provider.calls++] ?? [];
      for (const step of script) {
        if (step instanceof Error) throw step;
        yield step;
      }
    },
  };
  return provider;
}

const request: ChatRequest = { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'q' }], maxTokens: 16 };
const http = (status: number, body: object, headers: Record<string, string> = {}) =>
  new UpstreamHttpError('vertex', status, JSON.stringify(body), headers);
const busy = () => http(503, { error: { code: 503, message: 'unavailable', status: 'UNAVAILABLE' } });
const delta = (text: string): ChatChunk => ({ type: 'delta', text });
const usage: ChatChunk = { type: 'usage', promptTokens: 5, completionTokens: 2 };

describe('streamWithRetry', () => {
  it('retries a retryable failure before the first delta, with backoff, and streams the answer', async () => {
    const provider = scripted([busy()], [busy()], [delta('a'), delta('b'), usage]);
    const notices: RetryNotice[] = [];
    const { text, usage: u } = await collect(
      streamWithRetry(provider, request, { baseDelayMs: 10, random: () => 1, onRetry: (n) => notices.push(n) }),
    );
    expect(text).toBe('ab');
    expect(u).toEqual(usage);
    expect(notices.map((n) => [n.attempt, n.delayMs, n.failure.status])).toEqual([
      [1, 10, 503],
      [2, 20, 503],
    ]);
  });

  it('honours retry-after over its own backoff', async () => {
    const provider = scripted(
      [http(429, { error: { message: 'slow down' } }, { 'retry-after': '0.05' })],
      [delta('ok'), usage],
    );
    const notices: RetryNotice[] = [];
    await collect(streamWithRetry(provider, request, { baseDelayMs: 5000, onRetry: (n) => notices.push(n) }));
    expect(notices[0]?.delayMs).toBe(50);
  });

  it('gives up after maxAttempts with the last failure', async () => {
    const provider = scripted([busy()], [busy()], [busy()]);
    const err = (await thrown(() =>
      collect(streamWithRetry(provider, request, { baseDelayMs: 1 })),
    )) as UpstreamFailureError;
    expect(err).toBeInstanceOf(UpstreamFailureError);
    expect(err).toMatchObject({ attempts: 3, streamed: false, failure: { kind: 'retryable', status: 503 } });
    expect(provider.calls).toBe(3);
  });

  it('never retries after text has streamed', async () => {
    const provider = scripted([delta('partial '), busy()], [delta('never')]);
    const err = (await thrown(() =>
      collect(streamWithRetry(provider, request, { baseDelayMs: 1 })),
    )) as UpstreamFailureError;
    expect(err).toMatchObject({ attempts: 1, streamed: true, failure: { kind: 'retryable' } });
    expect(provider.calls).toBe(1);
  });

  it('returns an overflow at once, for the caller to re-budget', async () => {
    const overflow = http(400, {
      error: {
        code: 400,
        message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1000000).',
        status: 'INVALID_ARGUMENT',
      },
    });
    const provider = scripted([overflow], [delta('never')]);
    const err = (await thrown(() => collect(streamWithRetry(provider, request)))) as UpstreamFailureError;
    expect(err.failure).toMatchObject({ kind: 'overflow', limit: 1000000, actual: 1200000 });
    expect(provider.calls).toBe(1);
  });

  it('does not wait longer than maxRetryAfterMs: it fails at once', async () => {
    const provider = scripted([http(429, { error: { message: 'slow down' } }, { 'retry-after': '120' })]);
    const err = (await thrown(() => collect(streamWithRetry(provider, request)))) as UpstreamFailureError;
    expect(err).toMatchObject({ attempts: 1, failure: { kind: 'retryable', status: 429, retryAfterMs: 120000 } });
  });

  it('turns a cancelled wait into a timeout', async () => {
    const controller = new AbortController();
    const provider = scripted([busy()], [delta('never')]);
    setTimeout(() => controller.abort(), 20);
    const err = (await thrown(() =>
      collect(streamWithRetry(provider, request, { baseDelayMs: 10000, signal: controller.signal })),
    )) as UpstreamFailureError;
    expect(err.failure).toEqual({ kind: 'timeout' });
  });
});

describe('retryDelayMs', () => {
  it('doubles from baseDelayMs up to maxDelayMs, jittered between half and all of the step', () => {
    expect(
      [1, 2, 3, 4, 5].map((a) => retryDelayMs(a, {}, { baseDelayMs: 500, maxDelayMs: 4000, random: () => 1 })),
    ).toEqual([500, 1000, 2000, 4000, 4000]);
    expect(retryDelayMs(1, {}, { baseDelayMs: 500, random: () => 0 })).toBe(250);
    expect(retryDelayMs(3, { retryAfterMs: 1234 })).toBe(1234);
  });
});
