import { spawn } from 'node:child_process';
import { connect } from 'node:http2';
import { join } from 'node:path';
import { type FakeUpstream, startFakeUpstream } from './fake-upstream';
import { countPromptTokens, FAKE_ANSWER, windowOf } from './prompt';
import { ollamaShiftedPrompt } from './routes/ollama.routes';

const post = (fake: FakeUpstream, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${fake.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });

describe('startFakeUpstream', () => {
  let fake: FakeUpstream;
  beforeEach(async () => {
    fake = await startFakeUpstream();
  });
  afterEach(async () => {
    await fake.close();
  });

  it('listens on loopback only, on a free port', () => {
    expect(fake.url).toBe(`http://127.0.0.1:${fake.port}`);
    expect(fake.port).toBeGreaterThan(0);
  });

  describe('auth', () => {
    it.each([
      ['/v1/chat/completions', { model: 'gpt-4o', messages: [] }, 401, "You didn't provide an API key"],
      [
        '/openai/v1/chat/completions',
        { model: 'gpt-4o', messages: [] },
        401,
        'Access denied due to invalid subscription key',
      ],
      ['/v1/messages', { model: 'claude-sonnet-4-6', messages: [] }, 401, 'invalid x-api-key'],
      [
        '/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse',
        { messages: [] },
        403,
        'Missing Authentication Token',
      ],
      [
        '/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-flash:countTokens',
        { contents: [] },
        401,
        'Expected OAuth 2 access token',
      ],
    ])('rejects %s without credentials in the provider’s own words', async (path, body, status, words) => {
      const response = await post(fake, path, body);
      expect(response.status).toBe(status);
      expect(await response.text()).toContain(words);
    });

    it('records the scheme and redacts secret headers', async () => {
      await post(
        fake,
        '/v1/chat/completions',
        { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
        { authorization: 'Bearer sk-live-SECRET-000' },
      );
      expect(fake.requests[0]).toMatchObject({ auth: 'bearer', headers: { authorization: '[redacted]' } });
      expect(JSON.stringify(fake.requests)).not.toContain('SECRET');
    });
  });

  describe('faults', () => {
    const chat = () =>
      post(
        fake,
        '/v1/chat/completions',
        { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] },
        { authorization: 'Bearer k' },
      );

    it('answers 429 with retry-after for the next N requests, then normally', async () => {
      fake.setFault({ kind: '429', retryAfterSeconds: 2 }, 2);
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await chat()).status);
      expect(statuses).toEqual([429, 429, 200]);
      expect(fake.requests.map((r) => r.fault)).toEqual(['429', '429', undefined]);
    });

    it('redirects the next request to the given location (307), then answers normally', async () => {
      fake.setFault({ kind: 'redirect', location: 'http://127.0.0.1:9/internal' });
      const redirected = await fetch(`${fake.url}/v1/chat/completions`, {
        method: 'POST',
        redirect: 'manual',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: '{"model":"gpt-4o","messages":[]}',
      });
      expect([redirected.status, redirected.headers.get('location')]).toEqual([307, 'http://127.0.0.1:9/internal']);
      expect((await chat()).status).toBe(200);
      expect(fake.requests.map((r) => r.fault)).toEqual(['redirect', undefined]);
    });

    it('takes a fault from the x-fake-fault header', async () => {
      const response = await post(
        fake,
        '/v1/chat/completions',
        { model: 'gpt-4o', messages: [] },
        { authorization: 'Bearer k', 'x-fake-fault': '500' },
      );
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({
        error: {
          message: 'The server had an error while processing your request. Sorry about that!',
          type: 'server_error',
          param: null,
          code: null,
        },
      });
    });

    it('never faults a count endpoint', async () => {
      fake.setFault('500');
      const count = await post(
        fake,
        '/v1/messages/count_tokens',
        { model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'hi' }] },
        { 'x-api-key': 'k' },
      );
      expect(count.status).toBe(200);
      const next = await post(
        fake,
        '/v1/messages',
        { model: 'claude-sonnet-4-6', max_tokens: 5, messages: [] },
        { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      );
      expect(next.status).toBe(500);
    });

    it('stalls until the client gives up, and close() still returns', async () => {
      fake.setFault('stall');
      await expect(
        fetch(`${fake.url}/api/chat`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(100) }),
      ).rejects.toThrow();
    });

    it('drops a stream without its final event on truncate', async () => {
      fake.setFault('truncate');
      const response = await post(
        fake,
        '/v1/chat/completions',
        { model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, messages: [] },
        { authorization: 'Bearer k' },
      );
      const text = await response.text();
      expect(text).toContain('streams this answer');
      expect(text).not.toContain('[DONE]');
      expect(text).not.toContain('"finish_reason":"stop"');
    });

    it.each([
      [
        'OpenAI',
        '/v1/chat/completions',
        { model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, messages: [] },
        { authorization: 'Bearer k' },
        '"finish_reason":"stop"',
      ],
      [
        'Anthropic',
        '/v1/messages',
        { model: 'claude-sonnet-4-6', max_tokens: 50, stream: true, messages: [] },
        { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
        'data: {"type":"message_stop"}',
      ],
    ])(
      'ends the %s stream with its completing event, without a blank line, on unterminated-final',
      async (_, path, body, headers, last) => {
        fake.setFault('unterminated-final');
        const text = await (await post(fake, path as string, body as object, headers as Record<string, string>)).text();
        expect(text).toContain('streams this answer');
        expect(text.endsWith('\n')).toBe(false);
        expect(text.slice(text.lastIndexOf('\n') + 1)).toContain(last as string);
        expect(text).not.toContain('[DONE]');
      },
    );
  });

  describe('OpenAI wire', () => {
    it('answers non-streamed with usage counted by the model’s tokenizer', async () => {
      const messages = [{ role: 'user', content: 'What is HNSW?' }];
      const body = await (
        await post(fake, '/v1/chat/completions', { model: 'gpt-4o', messages }, { authorization: 'Bearer k' })
      ).json();
      expect(body.choices[0].message.content).toBe(FAKE_ANSWER);
      expect(body.usage.prompt_tokens).toBe(countPromptTokens('openai', 'gpt-4o', messages));
    });

    it('requires api-version on Azure deployment paths', async () => {
      const response = await post(
        fake,
        '/openai/deployments/gpt-4o/chat/completions',
        { messages: [] },
        { 'api-key': 'k' },
      );
      expect(response.status).toBe(404);
    });

    it('answers embeddings in base64 when asked (the openai SDK default)', async () => {
      const body = await (
        await post(
          fake,
          '/v1/embeddings',
          { model: 'text-embedding-3-small', input: ['a'], dimensions: 8, encoding_format: 'base64' },
          { authorization: 'Bearer k' },
        )
      ).json();
      expect(Buffer.from(body.data[0].embedding, 'base64').length / Float32Array.BYTES_PER_ELEMENT).toBe(8);
    });
  });

  describe('Ollama', () => {
    /** The first llama3 count loads the bundled tokenizer (seconds on a busy machine): more than jest's default 5 s. */
    const TOKENIZER_LOAD_MS = 60_000;

    it(
      'silently shifts an oversize prompt when truncate is not disabled, as Ollama does',
      async () => {
        const body = await (
          await post(fake, '/api/chat', {
            model: 'llama3.1:8b',
            stream: false,
            options: { num_ctx: 256 },
            messages: [{ role: 'user', content: 'word '.repeat(600) }],
          })
        ).json();
        expect(body.prompt_eval_count).toBe(ollamaShiftedPrompt(256));
        expect(body.message.content).toBe(FAKE_ANSWER);
      },
      TOKENIZER_LOAD_MS,
    );

    it(
      'fails an oversize prompt with truncate: false, in the llama.cpp body Ollama relays',
      async () => {
        const response = await post(fake, '/api/chat', {
          model: 'llama3.1:8b',
          truncate: false,
          options: { num_ctx: 256 },
          messages: [{ role: 'user', content: 'word '.repeat(600) }],
        });
        expect(response.status).toBe(400);
        const inner = JSON.parse((await response.json()).error);
        expect(inner.error).toMatchObject({
          type: 'exceed_context_size_error',
          n_ctx: 256,
          n_prompt_tokens: fake.requests[0]?.promptTokens,
        });
      },
      TOKENIZER_LOAD_MS,
    );
  });

  describe('non-streamed routes of the other providers', () => {
    it('answers Bedrock Converse, Gemini generateContent, Claude rawPredict and Anthropic Messages whole', async () => {
      const sigv4 = {
        authorization:
          'AWS4-HMAC-SHA256 Credential=AKIA/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=abc',
      };
      const converse = await (
        await post(
          fake,
          '/model/meta.llama3-1-8b-instruct-v1%3A0/converse',
          { messages: [{ role: 'user', content: [{ text: 'hi' }] }] },
          sigv4,
        )
      ).json();
      expect(converse.output.message.content[0].text).toBe(FAKE_ANSWER);
      const gemini = await (
        await post(
          fake,
          '/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-flash:generateContent',
          { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
          { authorization: 'Bearer t' },
        )
      ).json();
      expect(gemini.candidates[0].content.parts[0].text).toBe(FAKE_ANSWER);
      const raw = await (
        await post(
          fake,
          '/v1/projects/p/locations/l/publishers/anthropic/models/claude-sonnet-4-5:rawPredict',
          { anthropic_version: 'vertex-2023-10-16', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
          { authorization: 'Bearer t' },
        )
      ).json();
      expect(raw.content[0].text).toBe(FAKE_ANSWER);
      const messages = await (
        await post(
          fake,
          '/v1/messages',
          { model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
          { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
        )
      ).json();
      expect(messages.content[0].text).toBe(FAKE_ANSWER);
    });

    it('speaks HTTP/2 (h2c) on the same port, as the AWS SDK does for Bedrock', async () => {
      const session = connect(fake.url);
      try {
        const status = await new Promise<number>((resolve, reject) => {
          const req = session.request({
            ':method': 'POST',
            ':path': '/model/x/converse',
            'content-type': 'application/json',
          });
          req.on('response', (h) => resolve(Number(h[':status'])));
          req.on('error', reject);
          req.end('{}');
        });
        expect(status).toBe(403);
      } finally {
        session.close();
      }
    });
  });

  it('enforces catalog windows', () => {
    expect([
      windowOf('openai', 'gpt-4o'),
      windowOf('anthropic', 'claude-sonnet-4-6'),
      windowOf('vertex', 'gemini-2.5-pro'),
      windowOf('ollama', 'llama2:7b'),
    ]).toEqual([128000, 200000, 1000000, 4096]);
  });
});

describe('main (CLI)', () => {
  it('starts on the given port and prints its URL', async () => {
    const root = join(__dirname, '..', '..', '..');
    const child = spawn(process.execPath, ['tools/run-ts.js', 'tools/fake-upstream/src/main.ts', '--port', '0'], {
      cwd: root,
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => resolve(d.toString()));
        child.on('error', reject);
        child.on('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      expect(line).toMatch(/^fake upstream listening on http:\/\/127\.0\.0\.1:\d+\n$/);
      const url = line.trim().split(' ').pop() ?? '';
      const response = await fetch(`${url}/api/embed`, {
        method: 'POST',
        body: JSON.stringify({ model: 'all-minilm', input: 'x' }),
      });
      expect((await response.json()).embeddings[0]).toHaveLength(384);
    } finally {
      child.kill('SIGTERM');
    }
  }, 30000);
});
