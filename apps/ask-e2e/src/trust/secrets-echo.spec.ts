import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AskClient } from '@ask/ask-client';
import type { ProjectSettingsInput } from '@ask/persistence';
import { follow } from '../faults/fixture';
import { startTrustStack, type TrustStack } from './trust-stack';

/** Modes of the echo upstream, chosen by the first path segment of the project's baseUrl. */
type Mode = 'chat' | 'stream' | 'embed';

/**
 * An upstream that echoes whatever credential it receives (`Authorization: Bearer …`, `api-key`,
 * `x-api-key`) in its error text, as a provider's "Incorrect API key provided: <key>" does:
 * `/chat/…` answers a 400, `/stream/…` starts a 200 stream then sends an in-band error event,
 * `/embed/…` answers a 400 to the embeddings call. Records every credential it echoed.
 */
async function startEchoUpstream(): Promise<{
  url: string;
  echoed: Array<{ mode: string; credential: string; stream: boolean }>;
  close(): Promise<void>;
}> {
  const echoed: Array<{ mode: string; credential: string; stream: boolean }> = [];
  const credentialOf = (req: IncomingMessage) => {
    const bearer = /^Bearer (.+)$/.exec(String(req.headers['authorization'] ?? ''))?.[1];
    return String(req.headers['api-key'] ?? req.headers['x-api-key'] ?? bearer ?? '');
  };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const mode = (req.url ?? '/').split('/')[1];
      const credential = credentialOf(req);
      echoed.push({ mode, credential, stream: /"stream":\s*true/.test(body) });
      const message = `Incorrect API key provided: ${credential}. You can find your API key at https://platform.openai.com/account/api-keys (received ${JSON.stringify(credential)}, ${encodeURIComponent(credential)}).`;
      const error = { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_api_key' } };
      if (mode === 'stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = {
          id: 'c1',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'gpt-4o',
          choices: [{ index: 0, delta: { role: 'assistant', content: 'Partial answer ' }, finish_reason: null }],
        };
        res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        res.end(`data: ${JSON.stringify(error)}\n\n`);
        return;
      }
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify(error));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, echoed, close: () => new Promise<void>((done) => server.close(() => done())) };
}

const b64url = (bytes: number) => randomBytes(bytes).toString('base64url');

/** Five credential shapes the shape rules alone miss or may miss; each is a project's provider key. */
const SHAPES: Record<string, { provider: 'openai' | 'azure-foundry'; key: string }> = {
  'azure 32-hex': { provider: 'azure-foundry', key: randomBytes(16).toString('hex') },
  'gw-live gateway key': { provider: 'openai', key: `gw-live-${b64url(24)}` },
  'random base64url': { provider: 'openai', key: b64url(32) },
  JWT: {
    provider: 'openai',
    key: (() => {
      const head = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url');
      const body = Buffer.from(JSON.stringify({ sub: 'svc-ask', iat: 1764547200, jti: b64url(8) })).toString(
        'base64url',
      );
      return `${head}.${body}.${createHmac('sha256', randomBytes(16)).update(`${head}.${body}`).digest('base64url')}`;
    })(),
  },
  'AWS secret access key': {
    provider: 'openai',
    key: randomBytes(30).toString('base64').replace(/=+$/, '').slice(0, 40),
  },
};

/**
 * Secrets suite (issue 11): an upstream that echoes the credential it receives, for keys of five
 * shapes, on the chat call (400 before the stream), in-band stream errors, the question's embedding
 * (retrieval worker) and ingestion (ingestion worker). No occurrence of any secret the service holds
 * (those five keys, the projects' API keys, the admin key, the events secret, the encryption key) in
 * any HTTP body, SSE event or log line of the four apps at LOG_LEVEL=verbose; and the error text still
 * reaches the caller with the key replaced (`Incorrect API key provided: ***`).
 */
describe('secrets echoed by an upstream never leave (gateway and workers as processes)', () => {
  let t: TrustStack;
  let echo: Awaited<ReturnType<typeof startEchoUpstream>>;
  const texts: Array<{ what: string; text: string }> = [];
  const apiKeys: string[] = [];
  const errors: Record<string, { status?: number; code?: string; details?: string }> = {};
  const streamEvents: Record<string, string> = {};

  const settings = (provider: 'openai' | 'azure-foundry', mode: Mode): ProjectSettingsInput => {
    const url = provider === 'azure-foundry' ? `${echo.url}/${mode}` : `${echo.url}/${mode}/v1`;
    return {
      llmSettings: (mode === 'embed'
        ? { provider: 'local', model: 'local' }
        : { provider, model: 'gpt-4o', baseUrl: url }) as never,
      embeddingSettings: (mode === 'embed'
        ? { provider, model: 'text-embedding-3-small', dimensions: 256, baseUrl: url }
        : { provider: 'local', model: 'local-lexical-v1', dimensions: 256 }) as never,
      topK: 4,
    };
  };

  /** Follows an ask to its end, keeping the parsed events and the raw SSE text of a replay. */
  async function askAndKeep(name: string, p: { id: string; key: string; client: AskClient }): Promise<void> {
    const accepted = await p.client.ask(p.id, 'Which key does the service use?');
    texts.push({ what: `${name} 202`, text: JSON.stringify(accepted) });
    const outcome = await follow(p.client, accepted.askId, accepted.sessionId, 60_000);
    texts.push({ what: `${name} events`, text: JSON.stringify(outcome.events) });
    if (outcome.error) errors[name] = outcome.error;
    if (name.endsWith(' stream'))
      streamEvents[name] = outcome.events
        .map((e) => `${e.type}${e.type === 'delta' ? `:${JSON.stringify(e.data)}` : ''}`)
        .join(' ');
    const replay = await t.call('GET', accepted.eventsUrl, { sseMs: 1_500 });
    texts.push({ what: `${name} SSE replay`, text: replay.text });
    const session = await t.call('GET', `/api/v1/projects/${p.id}/sessions/${accepted.sessionId}`, { key: p.key });
    texts.push({ what: `${name} session`, text: session.text });
  }

  beforeAll(async () => {
    echo = await startEchoUpstream();
    t = await startTrustStack('secrets-echo', { ASK_PROVIDER_URL_ALLOWLIST: echo.url, ASK_DEADLINE_MS: '20000' });
    await Promise.all(
      Object.entries(SHAPES).flatMap(([shape, { provider, key }]) =>
        (['chat', 'stream', 'embed'] as const).map(async (mode) => {
          const name = `${shape} ${mode}`;
          const p = await t.project(name, settings(provider, mode), { apiKey: key });
          apiKeys.push(p.key);
          await askAndKeep(name, p);
          if (mode === 'embed') {
            const accepted = await p.client.ingestKnowledge(p.id, [
              { uri: 'keys.md', text: 'The service stores provider keys encrypted.' },
            ]);
            const followed = await p.client.followIngestion(p.id, accepted.ingestionId);
            texts.push({ what: `${name} ingestion events`, text: JSON.stringify(followed.events) });
            // A provider 400 fails the document (document_failed, then done); other failures end the run.
            const failed = followed.events.find((e) => e.type === 'document_failed')?.data as
              { error?: (typeof errors)[string] } | undefined;
            const ended = followed.error ?? failed?.error;
            if (ended) errors[`${name} ingestion`] = ended;
            const view = await t.call('GET', accepted.statusUrl, { key: p.key });
            texts.push({ what: `${name} ingestion status`, text: view.text });
          }
          const read = await t.call('GET', `/api/v1/projects/${p.id}`, { key: p.key });
          texts.push({ what: `${name} project`, text: read.text });
        }),
      ),
    );
    // The same keys sent through the gateway's own routes: settings and errors beside them.
    for (const [shape, { key }] of Object.entries(SHAPES)) {
      const p = await t.project(`${shape} via PATCH`, settings('openai', 'chat'));
      apiKeys.push(p.key);
      const patched = await t.call('PATCH', `/api/v1/projects/${p.id}`, {
        key: t.adminKey,
        json: { credentials: { apiKey: key } },
      });
      texts.push({ what: `${shape} PATCH`, text: patched.text });
      const bad = await t.call('PATCH', `/api/v1/projects/${p.id}`, {
        key: p.key,
        json: { llm: { provider: 'openai', model: key, baseUrl: `${key}://x` } },
      });
      texts.push({ what: `${shape} bad PATCH`, text: bad.text });
    }
  }, 175_000);

  afterAll(async () => {
    await t?.close();
    await echo?.close();
  });

  const secrets = () => [
    ...Object.entries(SHAPES).map(([shape, { key }]) => ({ name: shape, value: key })),
    ...apiKeys.map((value, i) => ({ name: `project API key ${i}`, value })),
    { name: 'admin key', value: t.adminKey },
    { name: 'events secret', value: t.eventsSecret },
    { name: 'encryption key', value: t.encryptionKey },
  ];

  it('the upstream received and echoed each of the five keys on chat, stream and embedding calls', () => {
    const got = Object.fromEntries(
      Object.entries(SHAPES).map(([shape, { key }]) => [
        shape,
        [...new Set(echo.echoed.filter((e) => e.credential === key).map((e) => e.mode))].sort(),
      ]),
    );
    expect(got).toEqual(Object.fromEntries(Object.keys(SHAPES).map((shape) => [shape, ['chat', 'embed', 'stream']])));
    // The stream mode's calls were streamed chat calls: its error came in-band, after a 200 and a first chunk.
    expect(echo.echoed.filter((e) => e.mode === 'stream').every((e) => e.stream)).toBe(true);
  });

  it('every ask and ingestion ended with a typed error whose details keep the message with the key as ***', () => {
    const names = Object.keys(SHAPES).flatMap((s) => [
      `${s} chat`,
      `${s} stream`,
      `${s} embed`,
      `${s} embed ingestion`,
    ]);
    expect(Object.keys(errors).sort()).toEqual(names.sort());
    for (const name of names) {
      expect(errors[name]).toEqual(
        expect.objectContaining({ status: expect.any(Number), code: expect.stringMatching(/^[a-z_]+$/) }),
      );
    }
    // The provider's words reach the caller, sanitised: each form of the key (raw, JSON-escaped, URL-encoded) is ***.
    const echoedText =
      'Incorrect API key provided: ***. You can find your API key at https://platform.openai.com/account/api-keys (received "***", ***).';
    const got = Object.fromEntries(names.map((n) => [n, `${errors[n].status} ${errors[n].code} ${errors[n].details}`]));
    const want = Object.fromEntries(
      Object.entries(SHAPES).flatMap(([s, { provider }]) => [
        [`${s} chat`, `502 llm_upstream status=400 ${echoedText}`],
        [`${s} stream`, `502 llm_upstream status=400 ${echoedText}`],
        [`${s} embed`, `502 embedding_upstream provider=${provider} status=400 ${echoedText}`],
        [`${s} embed ingestion`, `502 embedding_upstream provider=${provider} status=400 ${echoedText}`],
      ]),
    );
    expect(got).toEqual(want);
    // The stream mode's errors came in-band: after the first delta of a started answer.
    expect(streamEvents).toEqual(
      Object.fromEntries(
        Object.keys(SHAPES).map((s) => [
          `${s} stream`,
          'accepted retrieved budget delta:{"text":"Partial answer "} error',
        ]),
      ),
    );
  });

  it('no HTTP body or SSE event holds any secret (five key shapes, API keys, admin key, events secret, encryption key)', () => {
    expect(texts.length).toBe(Object.keys(SHAPES).length * (3 * 5 + 2 + 2));
    const found = texts.flatMap(({ what, text }) =>
      secrets()
        .filter((s) => text.includes(s.value))
        .map((s) => `${s.name} in ${what}`),
    );
    expect(found).toEqual([]);
  });

  it('no log line of the four apps holds any of them (LOG_LEVEL=verbose)', () => {
    const logs = t.logs();
    expect(logs.length).toBeGreaterThan(0);
    expect(
      secrets()
        .filter((s) => logs.includes(s.value))
        .map((s) => s.name),
    ).toEqual([]);
  });
});
