import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createChatProvider } from '../create-chat-provider';
import { allowing } from '../testing/egress';
import type { LlmSettings } from '../types';
import { findEgressRefusal } from './egress-policy';

const SECRET = 'sk-ant-PLANTED-redirect-0000000000000000';

/** A loopback server recording each request's headers; `redirectTo` answers every request with a 307 there. */
async function server(
  redirectTo?: () => string,
): Promise<{ url: string; seen: IncomingHttpHeaders[]; close(): Promise<void> }> {
  const seen: IncomingHttpHeaders[] = [];
  const s: Server = createServer((req, res) => {
    seen.push(req.headers);
    if (redirectTo) res.writeHead(307, { location: `${redirectTo()}${req.url}` }).end();
    else res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"unused"}}');
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise((r) => s.close(() => r())),
  };
}

/**
 * An upstream that answers with a redirect to another origin: fetch strips only `Authorization` on a
 * cross-origin hop, so the Anthropic (`x-api-key`) and Azure (`api-key`) credentials once travelled to
 * the redirect's host, which they were never given for (both servers are allow-listed here, so only
 * the redirect rule is under test). Redirects are now refused, typed, before any second request.
 */
describe('provider calls never follow a redirect with the credential', () => {
  let other: Awaited<ReturnType<typeof server>>;
  let upstream: Awaited<ReturnType<typeof server>>;
  beforeAll(async () => {
    other = await server();
    upstream = await server(() => other.url);
  });
  afterAll(() => Promise.all([other.close(), upstream.close()]));

  it.each([
    ['anthropic (x-api-key)', { provider: 'anthropic', model: 'claude-sonnet-4-6' }],
    ['azure-foundry (api-key)', { provider: 'azure-foundry', model: 'gpt-4o', apiVersion: '2024-10-21' }],
    ['openai-compatible (Authorization)', { provider: 'openai', model: 'gpt-4o' }],
  ])('%s: refused with the field named; the other origin sees no request', async (_name, settings) => {
    const before = { upstream: upstream.seen.length, other: other.seen.length };
    const egress = allowing(upstream, other);
    const provider = createChatProvider(
      { ...settings, baseUrl: `${upstream.url}/v1` } as LlmSettings,
      { apiKey: SECRET },
      egress,
    );
    let err: unknown;
    try {
      for await (const _ of provider.streamChat({
        model: settings.model,
        messages: [{ role: 'user', content: 'hi' }],
        maxTokens: 16,
      }));
    } catch (e) {
      err = e;
    }
    await egress.egress.close();
    expect([
      upstream.seen.length - before.upstream,
      other.seen.slice(before.other).map((h) => h['x-api-key'] ?? h['api-key'] ?? h.authorization ?? 'no key'),
      findEgressRefusal(err)?.message,
    ]).toEqual([1, [], 'llm.baseUrl: the provider answered with a redirect (307), which is not followed']);
  });
});
