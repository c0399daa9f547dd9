import { connect } from 'node:net';
import { type Harness, type Reply, localProject, startGateway } from './gateway-harness';

/** The Content-Security-Policy the gateway sends (gateway.factory.ts `SECURITY_HEADERS`), fitted to the dashboard. */
const CSP =
  "default-src 'self';base-uri 'self';connect-src 'self';font-src 'self' data:;form-action 'self';frame-ancestors 'none';" +
  "img-src 'self' data:;object-src 'none';script-src 'self';script-src-attr 'none';style-src 'self'";

/**
 * HTTP hardening on the real gateway (in-process, real PostgreSQL and Redis): security headers on
 * every kind of answer, `Cache-Control: no-store` on every answer that carries a key or a token, and
 * bodies in another charset than UTF-8 answered with a typed 415.
 */
describe('HTTP hardening (real gateway, PostgreSQL and Redis)', () => {
  let h: Harness;
  let project: { id: string; key: string; keyId: string };

  beforeAll(async () => {
    h = await startGateway({ ASK_RATE_LIMIT_PER_MINUTE: '100000', INGEST_RATE_LIMIT_PER_MINUTE: '100000' });
    project = await localProject(h, 'hardening');
  }, 60_000);
  afterAll(() => h?.close());

  const headersOf = (reply: Reply) => ({
    'content-security-policy': reply.headers.get('content-security-policy'),
    'x-content-type-options': reply.headers.get('x-content-type-options'),
    'x-frame-options': reply.headers.get('x-frame-options'),
    'referrer-policy': reply.headers.get('referrer-policy'),
    'x-powered-by': reply.headers.get('x-powered-by'),
  });
  const SECURE = {
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-powered-by': null,
  };

  describe('security headers (helmet)', () => {
    it.each([
      ['GET /health (200)', () => h.call('GET', '/health'), 200],
      ['GET a project (200)', () => h.call('GET', `/api/v1/projects/${project.id}`, { key: project.key }), 200],
      ['no key (401)', () => h.call('GET', `/api/v1/projects/${project.id}`), 401],
      ['an unknown API path (404)', () => h.call('GET', '/api/v1/nope', { key: project.key }), 404],
      [
        'a malformed body (400)',
        () => h.call('POST', `/api/v1/projects/${project.id}/ask`, { key: project.key, raw: '{"question":' }),
        400,
      ],
      ['the dashboard path (/)', () => h.call('GET', '/'), undefined],
    ] as const)('%s carries CSP, nosniff, DENY, no-referrer and no x-powered-by', async (_name, send, status) => {
      const reply = await send();
      if (status !== undefined) expect(reply.status).toBe(status);
      expect(headersOf(reply)).toEqual(SECURE);
    });

    it('an event stream carries them too', async () => {
      const accepted = await h.call('POST', `/api/v1/projects/${project.id}/ask`, {
        key: project.key,
        json: { question: 'Which headers?' },
      });
      const stream = await h.call('GET', (accepted.body as { eventsUrl: string }).eventsUrl);
      expect(stream.headers.get('content-type')).toContain('text/event-stream');
      expect(headersOf(stream)).toEqual(SECURE);
    });
  });

  describe('Cache-Control: no-store on every answer carrying a key or a token', () => {
    it('project create (admin), key create, key list, ask (events token), project read, and errors', async () => {
      const created = await h.call('POST', '/api/v1/projects', {
        key: h.adminKey,
        json: { name: 'no-store', llm: { provider: 'local', model: 'local' } },
      });
      const id = (created.body as { id: string }).id;
      const key = await h.call('POST', `/api/v1/projects/${id}/keys`, { key: h.adminKey, json: { name: 'ci' } });
      const list = await h.call('GET', `/api/v1/projects/${id}/keys`, { key: h.adminKey });
      const ask = await h.call('POST', `/api/v1/projects/${project.id}/ask`, {
        key: project.key,
        json: { question: 'Cached?' },
      });
      const read = await h.call('GET', `/api/v1/projects/${project.id}`, { key: project.key });
      const refused = await h.call('GET', `/api/v1/projects/${project.id}`, { key: 'ask_wrongwrongwr_wrong' });
      const got = [created, key, list, ask, read, refused].map((r) => `${r.status} ${r.headers.get('cache-control')}`);
      expect(got).toEqual([
        '201 no-store',
        '201 no-store',
        '200 no-store',
        '202 no-store',
        '200 no-store',
        '401 no-store',
      ]);
      expect(typeof (key.body as { key?: string }).key).toBe('string');
    });
  });

  describe('bodies in another charset than UTF-8', () => {
    const question = JSON.stringify({ question: 'In which charset?' });
    it.each([
      ['utf-16', Buffer.from(`\ufeff${question}`, 'utf16le')],
      ['utf-16le', Buffer.from(question, 'utf16le')],
      ['utf-32', Buffer.from(question, 'utf8')],
      ['latin1', Buffer.from(question, 'latin1')],
      ['iso-8859-1', Buffer.from(question, 'latin1')],
      ['windows-1252', Buffer.from(question, 'latin1')],
      ['utf8', Buffer.from(question, 'utf8')],
    ])('charset=%s → 415 typed, naming content-type', async (charset, raw) => {
      const reply = await h.call('POST', `/api/v1/projects/${project.id}/ask`, {
        key: project.key,
        raw,
        headers: { 'content-type': `application/json; charset=${charset}` },
      });
      expect(reply.status).toBe(415);
      expect(reply.body).toEqual({
        error: 'unsupported media type',
        code: 'invalid_request',
        details: `content-type: charset=${charset} is not supported (UTF-8 only)`,
      });
    });

    it.each(['utf-8', 'UTF-8'])('charset=%s is accepted (202)', async (charset) => {
      const reply = await h.call('POST', `/api/v1/projects/${project.id}/ask`, {
        key: project.key,
        raw: question,
        headers: { 'content-type': `application/json; charset=${charset}` },
      });
      expect(reply.status).toBe(202);
    });
  });

  describe("requests Node's HTTP parser refuses get the typed body too", () => {
    /** Writes `payload` on a raw socket and returns the status line and the parsed JSON body. */
    const raw = (payload: string) =>
      new Promise<[string, unknown]>((resolve, reject) => {
        const { port, hostname } = new URL(h.baseUrl);
        const socket = connect(Number(port), hostname);
        let text = '';
        socket.on('data', (chunk) => (text += chunk));
        socket.on('error', reject);
        socket.on('close', () => {
          const [head, body] = text.split('\r\n\r\n');
          resolve([head.split('\r\n')[0], body ? JSON.parse(body) : undefined]);
        });
        socket.end(payload);
      });

    it.each([
      ['a header of 20,000 characters', `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
      ['a query string of 100,000 characters', `GET /health?q=${'a'.repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
    ])('%s → 431 invalid_request', async (_name, payload) => {
      expect(await raw(payload)).toEqual([
        'HTTP/1.1 431 Request Header Fields Too Large',
        {
          error: 'request header fields too large',
          code: 'invalid_request',
          details: 'headers: the request line and headers exceed the 16384-byte limit',
        },
      ]);
    });

    it('a request that is not HTTP → 400 invalid_request', async () => {
      expect(await raw('GARBAGE\r\n\r\n')).toEqual([
        'HTTP/1.1 400 Bad Request',
        { error: 'malformed request', code: 'invalid_request', details: 'request: not a valid HTTP/1.1 request' },
      ]);
    });
  });
});
