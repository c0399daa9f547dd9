import { randomUUID } from 'node:crypto';
import { ASK_ERROR_CODES } from '@ask/ask-errors';
import { type CallOptions, type Harness, localProject, startGateway, tableChecksum } from './gateway-harness';

/** One malformed request and the field its 4xx must name (`details`, or `error` for the body as a whole). */
interface BadCase {
  name: string;
  method: string;
  /** Built lazily: ids exist only after setup. */
  path: () => string;
  options?: () => CallOptions;
  status: number;
  /** Text the body's `details` must contain (names the field and says why). */
  names: string | RegExp;
}

/**
 * Bad-input suite: malformed requests on every route, each a typed 4xx (`{ error, code, details }`
 * with a known code) naming the field; never a 5xx; the gateway still answers /health afterwards; and
 * every table's rows are unchanged (row counts and an md5 of the rows, before and after).
 */
describe('bad input (real gateway, PostgreSQL and Redis)', () => {
  let h: Harness;
  let a: { id: string; key: string; keyId: string };
  let b: { id: string; key: string; keyId: string };
  let bSession: string;
  let aAsk: string;
  let before: Record<string, string>;

  beforeAll(async () => {
    h = await startGateway({ ASK_RATE_LIMIT_PER_MINUTE: '100000', INGEST_RATE_LIMIT_PER_MINUTE: '100000' });
    a = await localProject(h, 'A');
    b = await localProject(h, 'B');
    bSession = (await h.sessions.create(b.id, 'B only')).id;
    const accepted = await h.call('POST', `/api/v1/projects/${a.id}/ask`, {
      key: a.key,
      json: { question: 'Seed question' },
    });
    aAsk = (accepted.body as { askId: string }).askId;
    before = await tableChecksum(h);
  }, 60_000);
  afterAll(() => h?.close());

  const ask = () => `/api/v1/projects/${a.id}/ask`;
  const project = () => `/api/v1/projects/${a.id}`;
  const knowledge = () => `/api/v1/projects/${a.id}/knowledge`;
  const insights = () => `/api/v1/projects/${a.id}/insights`;
  const events = () => `/api/v1/asks/${aAsk}/events`;
  const key = () => a.key;
  const asA = (json: unknown) => () => ({ key: key(), json });
  const rawAsA = (raw: string | Buffer, headers?: Record<string, string>) => () => ({ key: key(), raw, headers });
  const nested = (depth: number): unknown => (depth === 0 ? 'x' : { a: nested(depth - 1) });

  const cases: BadCase[] = [
    // Bodies that are not JSON objects.
    {
      name: 'truncated JSON',
      method: 'POST',
      path: ask,
      options: rawAsA('{"question":'),
      status: 400,
      names: 'body: not valid JSON',
    },
    {
      name: 'not JSON at all',
      method: 'POST',
      path: ask,
      options: rawAsA('question=hi'),
      status: 400,
      names: 'body: not valid JSON',
    },
    {
      name: 'a JSON string',
      method: 'POST',
      path: ask,
      options: rawAsA('"hello"'),
      status: 400,
      names: 'body: not valid JSON',
    },
    {
      name: 'JSON null',
      method: 'POST',
      path: ask,
      options: rawAsA('null'),
      status: 400,
      names: 'body: not valid JSON',
    },
    {
      name: 'a JSON array',
      method: 'POST',
      path: ask,
      options: rawAsA('[{"question":"hi"}]'),
      status: 400,
      names: 'question',
    },
    {
      name: 'trailing garbage',
      method: 'POST',
      path: ask,
      options: rawAsA('{"question":"hi"} x'),
      status: 400,
      names: 'body: not valid JSON',
    },
    {
      name: 'invalid UTF-8 bytes',
      method: 'POST',
      path: ask,
      options: rawAsA(
        Buffer.concat([Buffer.from('{"question":"caf'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]),
      ),
      status: 400,
      names: 'body: must be valid UTF-8',
    },
    {
      name: 'overlong UTF-8 encoding of "/"',
      method: 'POST',
      path: ask,
      options: rawAsA(Buffer.concat([Buffer.from('{"question":"'), Buffer.from([0xc0, 0xaf]), Buffer.from('"}')])),
      status: 400,
      names: 'body: must be valid UTF-8',
    },
    {
      name: 'a body over 8 MiB',
      method: 'POST',
      path: knowledge,
      options: asA({ documents: [{ uri: 'big', text: 'x'.repeat(9 * 1024 * 1024) }] }),
      status: 413,
      names: 'body: larger than the 8 MiB limit',
    },
    {
      name: 'charset=utf-16 (UTF-8 only)',
      method: 'POST',
      path: ask,
      options: rawAsA(Buffer.from('{"question":"hi"}', 'utf16le'), {
        'content-type': 'application/json; charset=utf-16le',
      }),
      status: 415,
      names: 'content-type: charset=utf-16le is not supported (UTF-8 only)',
    },
    {
      name: 'charset=latin1 (UTF-8 only)',
      method: 'POST',
      path: ask,
      options: rawAsA(Buffer.from('{"question":"caf\u00e9"}', 'latin1'), {
        'content-type': 'application/json; charset=latin1',
      }),
      status: 415,
      names: 'content-type: charset=latin1 is not supported (UTF-8 only)',
    },
    {
      name: 'text/plain body',
      method: 'POST',
      path: ask,
      options: rawAsA('question', { 'content-type': 'text/plain' }),
      status: 415,
      names: 'content-type: text/plain is not supported (send application/json)',
    },
    {
      name: 'text/plain documents (not a documents-count error)',
      method: 'POST',
      path: knowledge,
      options: rawAsA(JSON.stringify({ documents: [{ uri: 'a', text: 'b' }] }), {
        'content-type': 'text/plain;charset=UTF-8',
      }),
      status: 415,
      names: 'content-type: text/plain is not supported (send application/json)',
    },
    {
      name: 'multipart documents',
      method: 'POST',
      path: knowledge,
      options: rawAsA('--x\r\nContent-Disposition: form-data; name="documents"\r\n\r\n[]\r\n--x--\r\n', {
        'content-type': 'multipart/form-data; boundary=x',
      }),
      status: 415,
      names: 'content-type: multipart/form-data is not supported (send application/json)',
    },
    {
      name: 'a form body',
      method: 'PATCH',
      path: project,
      options: rawAsA('name=x', { 'content-type': 'application/x-www-form-urlencoded' }),
      status: 415,
      names: 'content-type: application/x-www-form-urlencoded is not supported',
    },
    {
      name: 'nesting 40 levels deep',
      method: 'PATCH',
      path: project,
      options: asA({ llm: nested(40) }),
      status: 400,
      names: /^llm(\.a)+: nested too deeply/,
    },
    // The ask body.
    { name: 'question missing', method: 'POST', path: ask, options: asA({}), status: 400, names: 'question:' },
    {
      name: 'question a number',
      method: 'POST',
      path: ask,
      options: asA({ question: 42 }),
      status: 400,
      names: 'question: question must be a string',
    },
    {
      name: 'question null',
      method: 'POST',
      path: ask,
      options: asA({ question: null }),
      status: 400,
      names: 'question:',
    },
    {
      name: 'question empty',
      method: 'POST',
      path: ask,
      options: asA({ question: '' }),
      status: 400,
      names: 'question: question should not be empty',
    },
    {
      name: 'question an array',
      method: 'POST',
      path: ask,
      options: asA({ question: ['a'] }),
      status: 400,
      names: 'question: question must be a string',
    },
    {
      name: 'question an object',
      method: 'POST',
      path: ask,
      options: asA({ question: { $ne: 1 } }),
      status: 400,
      names: 'question: question must be a string',
    },
    {
      name: 'question a boolean',
      method: 'POST',
      path: ask,
      options: asA({ question: true }),
      status: 400,
      names: 'question: question must be a string',
    },
    {
      name: 'question of 8,001 characters',
      method: 'POST',
      path: ask,
      options: asA({ question: 'x'.repeat(8001) }),
      status: 400,
      names: 'question: question must be shorter than or equal to 8000 characters',
    },
    {
      name: 'question of 6,160 tokens in 7,920 characters',
      method: 'POST',
      path: ask,
      options: asA({ question: '向量索引如何工作？'.repeat(880) }),
      status: 400,
      names: 'question: question must be at most 4000 tokens (o200k_base), got 6160',
    },
    {
      name: 'question of 1 MB',
      method: 'POST',
      path: ask,
      options: asA({ question: 'y'.repeat(1_000_000) }),
      status: 400,
      names: 'question: question must be shorter than or equal to 8000 characters',
    },
    {
      name: 'question of spaces, a newline and a tab',
      method: 'POST',
      path: ask,
      options: asA({ question: '   \n\t ' }),
      status: 400,
      names: 'question: question must contain a visible character (it is only whitespace)',
    },
    {
      name: 'question of one newline',
      method: 'POST',
      path: ask,
      options: asA({ question: '\n' }),
      status: 400,
      names: 'question: question must contain a visible character',
    },
    {
      name: 'question of a no-break space and an em space',
      method: 'POST',
      path: ask,
      options: asA({ question: '\u00a0\u2003' }),
      status: 400,
      names: 'question: question must contain a visible character',
    },
    {
      name: 'question of zero-width spaces',
      method: 'POST',
      path: ask,
      options: asA({ question: '\u200b\u200b\ufeff' }),
      status: 400,
      names: 'question: question must contain a visible character',
    },
    {
      name: 'question with a NUL byte',
      method: 'POST',
      path: ask,
      options: asA({ question: 'a\u0000b' }),
      status: 400,
      names: 'question: must not contain NUL characters',
    },
    {
      name: 'question with a lone surrogate',
      method: 'POST',
      path: ask,
      options: rawAsA('{"question":"broken \\ud800 pair"}'),
      status: 400,
      names: 'question: must be valid Unicode (lone surrogate)',
    },
    {
      name: 'sessionId not a UUID',
      method: 'POST',
      path: ask,
      options: asA({ question: 'q', sessionId: 'session-1' }),
      status: 400,
      names: 'sessionId: sessionId must be a UUID',
    },
    {
      name: 'sessionId a number',
      method: 'POST',
      path: ask,
      options: asA({ question: 'q', sessionId: 42 }),
      status: 400,
      names: 'sessionId:',
    },
    {
      name: 'sessionId with SQL',
      method: 'POST',
      path: ask,
      options: asA({ question: 'q', sessionId: "' OR 1=1 --" }),
      status: 400,
      names: 'sessionId:',
    },
    {
      name: 'sessionId of another project',
      method: 'POST',
      path: ask,
      options: () => ({ key: key(), json: { question: 'q', sessionId: bSession } }),
      status: 404,
      names: 'session not found',
    },
    {
      name: 'sessionId unknown',
      method: 'POST',
      path: ask,
      options: asA({ question: 'q', sessionId: randomUUID() }),
      status: 404,
      names: 'session not found',
    },
    {
      name: 'an unknown field',
      method: 'POST',
      path: ask,
      options: asA({ question: 'q', admin: true }),
      status: 400,
      names: 'admin: property admin should not exist',
    },
    {
      name: 'a __proto__ field',
      method: 'POST',
      path: ask,
      options: rawAsA('{"question":"q","__proto__":{"isAdmin":true}}'),
      status: 400,
      names: '__proto__',
    },
    {
      name: 'a constructor field',
      method: 'POST',
      path: ask,
      options: asA({ question: 'q', constructor: { prototype: { isAdmin: true } } }),
      status: 400,
      names: 'constructor: property constructor should not exist',
    },
    {
      name: 'a prototype field',
      method: 'POST',
      path: ask,
      options: asA({ question: 'q', prototype: { isAdmin: true } }),
      status: 400,
      names: 'prototype: property prototype should not exist',
    },
    {
      name: 'a nested __proto__ field',
      method: 'PATCH',
      path: project,
      options: rawAsA('{"llm":{"provider":"local","model":"local","__proto__":{"baseUrl":"http://127.0.0.1:6379"}}}'),
      status: 400,
      names: 'llm.__proto__: property __proto__ should not exist',
    },
    {
      name: 'a nested constructor field',
      method: 'PATCH',
      path: project,
      options: asA({ llm: { provider: 'local', model: 'local', constructor: { name: 'x' } } }),
      status: 400,
      names: 'llm.constructor: property constructor should not exist',
    },
    {
      name: 'a nested prototype field',
      method: 'PATCH',
      path: project,
      options: asA({ credentials: { prototype: 'x' } }),
      status: 400,
      names: 'credentials.prototype: property prototype should not exist',
    },
    {
      name: 'a constructor field in an array item',
      method: 'POST',
      path: knowledge,
      options: asA({ documents: [{ uri: 'a', text: 't', constructor: 1 }] }),
      status: 400,
      names: 'documents[0].constructor: property constructor should not exist',
    },
    {
      name: 'a field name with a NUL',
      method: 'POST',
      path: ask,
      options: asA({ question: 'q', 'x\u0000': 1 }),
      status: 400,
      names: 'a field name must not contain NUL characters',
    },
    // Path parameters.
    {
      name: 'projectId not a UUID',
      method: 'POST',
      path: () => '/api/v1/projects/abc/ask',
      options: asA({ question: 'q' }),
      status: 400,
      names: 'projectId: must be a UUID',
    },
    {
      name: 'projectId with SQL',
      method: 'GET',
      path: () => `/api/v1/projects/${encodeURIComponent("1' OR '1'='1")}/sessions`,
      options: () => ({ key: key() }),
      status: 400,
      names: 'projectId: must be a UUID',
    },
    {
      name: 'projectId a path traversal',
      method: 'GET',
      path: () => `/api/v1/projects/${encodeURIComponent('../../etc/passwd')}`,
      options: () => ({ key: key() }),
      status: 400,
      names: 'projectId: must be a UUID',
    },
    {
      name: 'projectId a UUID with braces',
      method: 'GET',
      path: () => `/api/v1/projects/${encodeURIComponent(`{${a.id}}`)}`,
      options: () => ({ key: key() }),
      status: 400,
      names: 'projectId: must be a UUID',
    },
    {
      name: 'sessionId in the path not a UUID',
      method: 'GET',
      path: () => `/api/v1/projects/${a.id}/sessions/1%20OR%201=1`,
      options: () => ({ key: key() }),
      status: 400,
      names: 'sessionId: must be a UUID',
    },
    {
      name: 'DELETE sessionId not a UUID',
      method: 'DELETE',
      path: () => `/api/v1/projects/${a.id}/sessions/none`,
      options: () => ({ key: key() }),
      status: 400,
      names: 'sessionId: must be a UUID',
    },
    {
      name: "GET another project's session",
      method: 'GET',
      path: () => `/api/v1/projects/${a.id}/sessions/${bSession}`,
      options: () => ({ key: key() }),
      status: 404,
      names: 'session not found',
    },
    {
      name: "DELETE another project's session",
      method: 'DELETE',
      path: () => `/api/v1/projects/${a.id}/sessions/${bSession}`,
      options: () => ({ key: key() }),
      status: 404,
      names: 'session not found',
    },
    {
      name: 'askId not a UUID',
      method: 'GET',
      path: () => '/api/v1/asks/nope/events',
      options: () => ({ key: key() }),
      status: 400,
      names: 'askId: must be a UUID',
    },
    {
      name: 'askId with a CRLF header injection',
      method: 'GET',
      path: () => '/api/v1/asks/x%0d%0aSet-Cookie:%20a=b/events',
      options: () => ({ key: key() }),
      status: 400,
      names: 'askId: must be a UUID',
    },
    // Headers.
    {
      name: 'Last-Event-ID not a stream id',
      method: 'GET',
      path: events,
      options: () => ({ key: key(), headers: { 'last-event-id': 'abc' } }),
      status: 400,
      names: 'Last-Event-ID: must be an event id',
    },
    {
      name: 'Last-Event-ID with a Redis command',
      method: 'GET',
      path: events,
      options: () => ({ key: key(), headers: { 'last-event-id': '$; FLUSHALL' } }),
      status: 400,
      names: 'Last-Event-ID:',
    },
    {
      name: 'Last-Event-ID negative',
      method: 'GET',
      path: events,
      options: () => ({ key: key(), headers: { 'last-event-id': '-1' } }),
      status: 400,
      names: 'Last-Event-ID:',
    },
    {
      name: 'Last-Event-ID of 21 digits',
      method: 'GET',
      path: events,
      options: () => ({ key: key(), headers: { 'last-event-id': `${'9'.repeat(21)}-0` } }),
      status: 400,
      names: 'Last-Event-ID:',
    },
    {
      name: 'Last-Event-ID with a header-injection tail',
      method: 'GET',
      path: events,
      options: () => ({ key: key(), headers: { 'last-event-id': '1-0 X-Injected: 1' } }),
      status: 400,
      names: 'Last-Event-ID:',
    },
    {
      name: 'events token too short',
      method: 'GET',
      path: () => `${events()}?token=abc`,
      status: 400,
      names: 'token (query): must be the 43-character token',
    },
    {
      name: 'events token given twice',
      method: 'GET',
      path: () => `${events()}?token=a&token=b`,
      status: 400,
      names: 'token (query):',
    },
    {
      name: 'Authorization with a header-injection string',
      method: 'GET',
      path: project,
      options: () => ({ headers: { authorization: 'Bearer x Set-Cookie: admin=1' } }),
      status: 401,
      names: 'malformed Authorization header',
    },
    // Project settings (PATCH).
    {
      name: 'topK negative',
      method: 'PATCH',
      path: project,
      options: asA({ topK: -1 }),
      status: 400,
      names: 'topK: topK must not be less than 1',
    },
    { name: 'topK zero', method: 'PATCH', path: project, options: asA({ topK: 0 }), status: 400, names: 'topK:' },
    {
      name: 'topK 51',
      method: 'PATCH',
      path: project,
      options: asA({ topK: 51 }),
      status: 400,
      names: 'topK: topK must not be greater than 50',
    },
    { name: 'topK 1e308', method: 'PATCH', path: project, options: asA({ topK: 1e308 }), status: 400, names: 'topK:' },
    {
      name: 'topK fractional',
      method: 'PATCH',
      path: project,
      options: asA({ topK: 1.5 }),
      status: 400,
      names: 'topK: topK must be an integer number',
    },
    { name: 'topK a string', method: 'PATCH', path: project, options: asA({ topK: '5' }), status: 400, names: 'topK:' },
    {
      name: 'maxTokens negative',
      method: 'PATCH',
      path: project,
      options: asA({ maxTokens: -5 }),
      status: 400,
      names: 'maxTokens:',
    },
    {
      name: 'maxTokens past 2^53',
      method: 'PATCH',
      path: project,
      options: rawAsA('{"maxTokens":9007199254740993}'),
      status: 400,
      names: 'maxTokens:',
    },
    { name: 'name empty', method: 'PATCH', path: project, options: asA({ name: '' }), status: 400, names: 'name:' },
    {
      name: 'name of 201 characters',
      method: 'PATCH',
      path: project,
      options: asA({ name: 'n'.repeat(201) }),
      status: 400,
      names: 'name:',
    },
    { name: 'name a number', method: 'PATCH', path: project, options: asA({ name: 5 }), status: 400, names: 'name:' },
    {
      name: 'name with a NUL',
      method: 'PATCH',
      path: project,
      options: asA({ name: 'ok\u0000' }),
      status: 400,
      names: 'name: must not contain NUL characters',
    },
    {
      name: 'systemPrompt of 8,001 characters',
      method: 'PATCH',
      path: project,
      options: asA({ systemPrompt: 's'.repeat(8001) }),
      status: 400,
      names: 'systemPrompt:',
    },
    {
      name: 'llm provider unknown',
      method: 'PATCH',
      path: project,
      options: asA({ llm: { provider: 'evil', model: 'm' } }),
      status: 400,
      names: 'llm.provider:',
    },
    {
      name: 'llm model missing',
      method: 'PATCH',
      path: project,
      options: asA({ llm: { provider: 'openai' } }),
      status: 400,
      names: 'llm.model:',
    },
    {
      name: 'llm baseUrl javascript:',
      method: 'PATCH',
      path: project,
      options: asA({ llm: { provider: 'openai', model: 'gpt-4o', baseUrl: 'javascript:alert(1)' } }),
      status: 400,
      names: 'llm.baseUrl:',
    },
    {
      name: 'llm contextWindow 1e12',
      method: 'PATCH',
      path: project,
      options: asA({ llm: { provider: 'openai', model: 'gpt-4o', contextWindow: 1e12 } }),
      status: 400,
      names: 'llm.contextWindow:',
    },
    {
      name: 'embedding dimensions negative',
      method: 'PATCH',
      path: project,
      options: asA({ embedding: { provider: 'local', model: 'local-lexical-v1', dimensions: -1 } }),
      status: 400,
      names: 'embedding.dimensions:',
    },
    {
      name: 'maxHistoryMessages 1',
      method: 'PATCH',
      path: project,
      options: asA({ maxHistoryMessages: 1 }),
      status: 400,
      names: 'maxHistoryMessages:',
    },
    // Settings under which no prompt fits (issue 12 item 4): refused when set, naming fields and figures.
    {
      name: 'llm.maxTokens equal to the local window',
      method: 'PATCH',
      path: project,
      options: asA({ llm: { provider: 'local', model: 'local', maxTokens: 8192 } }),
      status: 400,
      names:
        'llm.maxTokens, llm.model (catalog window): maxTokens=8192 + reserve=600 + margin=410 leave available=-1010 of window=8192 (model=local;',
    },
    {
      name: 'maxTokens 128,000 on the 8,192 local model',
      method: 'PATCH',
      path: project,
      options: asA({ maxTokens: 128000 }),
      status: 400,
      names:
        'maxTokens, llm.model (catalog window): maxTokens=128000 + reserve=600 + margin=410 leave available=-120818 of window=8192',
    },
    {
      name: 'llm.maxContextTokens 1,024 under the stored maxTokens 2,048',
      method: 'PATCH',
      path: project,
      options: asA({ llm: { provider: 'local', model: 'local', maxContextTokens: 1024 } }),
      status: 400,
      names:
        'maxTokens, llm.maxContextTokens: maxTokens=2048 + reserve=600 + margin=52 leave available=-1676 of window=1024',
    },
    {
      name: 'llm.contextWindow 1,024 with llm.maxTokens 2,048',
      method: 'PATCH',
      path: project,
      options: asA({
        llm: {
          provider: 'openai',
          model: 'mystery',
          baseUrl: 'http://127.0.0.1:9/v1',
          contextWindow: 1024,
          maxTokens: 2048,
        },
      }),
      status: 400,
      names:
        'llm.maxTokens, llm.contextWindow: maxTokens=2048 + reserve=600 + margin=154 leave available=-1778 of window=1024 (model=mystery;',
    },
    {
      name: 'a new project whose maxTokens fills the window',
      method: 'POST',
      path: () => '/api/v1/projects',
      options: () => ({
        key: h.adminKey,
        json: { name: 'full', llm: { provider: 'local', model: 'local' }, maxTokens: 7200 },
      }),
      status: 400,
      names:
        'maxTokens, llm.model (catalog window): maxTokens=7200 + reserve=600 + margin=410 leave available=-18 of window=8192',
    },
    {
      name: 'an unknown settings field',
      method: 'PATCH',
      path: project,
      options: asA({ ownerId: 'me' }),
      status: 400,
      names: 'ownerId: property ownerId should not exist',
    },
    {
      name: 'credentials.apiKey a number',
      method: 'PATCH',
      path: project,
      options: asA({ credentials: { apiKey: 5 } }),
      status: 400,
      names: 'credentials.apiKey:',
    },
    {
      name: 'credentials with an unknown field',
      method: 'PATCH',
      path: project,
      options: asA({ credentials: { password: 'p' } }),
      status: 400,
      names: 'credentials.password:',
    },
    // Ingestion.
    {
      name: 'documents empty',
      method: 'POST',
      path: knowledge,
      options: asA({ documents: [] }),
      status: 400,
      names: 'documents:',
    },
    {
      name: 'documents a string',
      method: 'POST',
      path: knowledge,
      options: asA({ documents: 'x' }),
      status: 400,
      names: 'documents:',
    },
    {
      name: 'document uri empty',
      method: 'POST',
      path: knowledge,
      options: asA({ documents: [{ uri: '', text: 't' }] }),
      status: 400,
      names: 'documents.0.uri:',
    },
    {
      name: 'document text a number',
      method: 'POST',
      path: knowledge,
      options: asA({ documents: [{ uri: 'a', text: 5 }] }),
      status: 400,
      names: 'documents.0.text:',
    },
    {
      name: 'document text missing',
      method: 'POST',
      path: knowledge,
      options: asA({ documents: [{ uri: 'a' }] }),
      status: 400,
      names: 'documents.0.text:',
    },
    {
      name: '201 documents',
      method: 'POST',
      path: knowledge,
      options: asA({ documents: Array.from({ length: 201 }, (_, i) => ({ uri: `d${i}`, text: 't' })) }),
      status: 400,
      names: 'documents: documents must contain no more than 200 elements',
    },
    {
      name: 'a document of 2,000,001 characters',
      method: 'POST',
      path: knowledge,
      options: asA({ documents: [{ uri: 'a', text: 't'.repeat(2_000_001) }] }),
      status: 400,
      names: 'documents.0.text:',
    },
    {
      name: 'a document with an unknown field',
      method: 'POST',
      path: knowledge,
      options: asA({ documents: [{ uri: 'a', text: 't', owner: 'b' }] }),
      status: 400,
      names: 'documents.0.owner:',
    },
    {
      name: 'a document text with a NUL',
      method: 'POST',
      path: knowledge,
      options: asA({ documents: [{ uri: 'a', text: 'x\u0000y' }] }),
      status: 400,
      names: 'documents[0].text: must not contain NUL characters',
    },
    {
      name: 'insight id empty',
      method: 'POST',
      path: insights,
      options: asA({ insights: [{ id: '', name: 'n', description: 'd' }] }),
      status: 400,
      names: 'insights.0.id:',
    },
    {
      name: 'insights a string',
      method: 'POST',
      path: insights,
      options: asA({ insights: 'nope' }),
      status: 400,
      names: 'insights:',
    },
    {
      name: 'recommendation body missing',
      method: 'POST',
      path: insights,
      options: asA({ recommendations: [{ id: 'r', title: 't' }] }),
      status: 400,
      names: 'recommendations.0.body:',
    },
    // Source ids (issue 25): one id per source in a request, NFC, no invisible or bidi controls.
    {
      name: 'duplicate insight ids',
      method: 'POST',
      path: insights,
      options: asA({
        insights: [
          { id: 'a', name: 'A', description: 'first' },
          { id: 'b', name: 'B', description: 'second' },
          { id: 'a', name: 'A again', description: 'third' },
        ],
      }),
      status: 400,
      names: 'insights[2].id: duplicate of insights[0].id ("a")',
    },
    {
      name: 'duplicate recommendation ids',
      method: 'POST',
      path: insights,
      options: asA({
        recommendations: [
          { id: 'r', title: 'R', body: 'one' },
          { id: 'r', title: 'R', body: 'two' },
        ],
      }),
      status: 400,
      names: 'recommendations[1].id: duplicate of recommendations[0].id ("r")',
    },
    {
      name: 'duplicate document uri',
      method: 'POST',
      path: knowledge,
      options: asA({
        documents: [
          { uri: 'guide.md', text: 'old' },
          { uri: 'guide.md', text: 'new' },
        ],
      }),
      status: 400,
      names: 'documents[1].uri: duplicate of documents[0].uri ("guide.md")',
    },
    {
      name: 'NFC and NFD spellings of one insight id',
      method: 'POST',
      path: insights,
      options: asA({
        insights: [
          { id: 'caf\u00e9', name: 'NFC', description: 'x' },
          { id: 'cafe\u0301', name: 'NFD', description: 'y' },
        ],
      }),
      status: 400,
      names: 'insights[1].id: duplicate of insights[0].id ("caf\u00e9")',
    },
    {
      name: 'document uri with a zero-width space',
      method: 'POST',
      path: knowledge,
      options: asA({ documents: [{ uri: 'guide\u200b.md', text: 'x' }] }),
      status: 400,
      names: 'documents[0].uri: must not contain invisible or bidirectional control characters (U+200B)',
    },
    {
      name: 'insight id with a right-to-left override',
      method: 'POST',
      path: insights,
      options: asA({ insights: [{ id: 'invoice-\u202Efdp.exe', name: 'n', description: 'd' }] }),
      status: 400,
      names: 'insights[0].id: must not contain invisible or bidirectional control characters (U+202E)',
    },
    {
      name: 'recommendation id with a BOM',
      method: 'POST',
      path: insights,
      options: asA({ recommendations: [{ id: '\ufeffr1', title: 't', body: 'b' }] }),
      status: 400,
      names: 'recommendations[0].id: must not contain invisible or bidirectional control characters (U+FEFF)',
    },
    // Re-embedding takes no body.
    {
      name: 'reembed body an array',
      method: 'POST',
      path: () => `/api/v1/projects/${a.id}/reembed`,
      options: asA([]),
      status: 400,
      names: 'body: reembed takes no body (send none, or {})',
    },
    {
      name: 'reembed body with an unknown field',
      method: 'POST',
      path: () => `/api/v1/projects/${a.id}/reembed`,
      options: asA({ force: true }),
      status: 400,
      names: 'force: property force should not exist',
    },
    // Model ids and API versions that would split a line or display as another id.
    {
      name: 'llm.model with a newline',
      method: 'PATCH',
      path: project,
      options: asA({ llm: { provider: 'openai', model: 'gpt-4o\nX-Injected: 1' } }),
      status: 400,
      names: 'llm.model: model must not contain control, invisible or bidirectional characters',
    },
    {
      name: 'llm.model with a right-to-left override',
      method: 'PATCH',
      path: project,
      options: asA({ llm: { provider: 'openai', model: 'gpt-4o\u202Eini' } }),
      status: 400,
      names: 'llm.model: model must not contain control, invisible or bidirectional characters',
    },
    {
      name: 'embedding.model with a tab',
      method: 'PATCH',
      path: project,
      options: asA({ embedding: { provider: 'openai', model: 'text-embedding-3-small\t', dimensions: 256 } }),
      status: 400,
      names: 'embedding.model: model must not contain control, invisible or bidirectional characters',
    },
    {
      name: 'llm.apiVersion with a query tail',
      method: 'PATCH',
      path: project,
      options: asA({ llm: { provider: 'azure-foundry', model: 'gpt-4o', apiVersion: '2024-10-21&x=1#' } }),
      status: 400,
      names: 'llm.apiVersion: apiVersion must be an API version like 2024-10-21, 2025-04-01-preview or v1',
    },
    {
      name: 'embedding.apiVersion with a path',
      method: 'PATCH',
      path: project,
      options: asA({
        embedding: { provider: 'azure-foundry', model: 'e', dimensions: 256, apiVersion: '../../v1' },
      }),
      status: 400,
      names: 'embedding.apiVersion: apiVersion must be an API version',
    },
    // Usage dates.
    {
      name: 'usage from=2026-02-30 (not rolled over to March 2)',
      method: 'GET',
      path: () => `/api/v1/projects/${a.id}/usage?from=2026-02-30&to=2026-03-10`,
      options: () => ({ key: key() }),
      status: 400,
      names: 'from: 2026-02-30 is not a calendar date',
    },
    {
      name: 'usage to=2026-04-31T10:00:00Z',
      method: 'GET',
      path: () => `/api/v1/projects/${a.id}/usage?from=2026-04-01&to=2026-04-31T10:00:00Z`,
      options: () => ({ key: key() }),
      status: 400,
      names: 'to: 2026-04-31 is not a calendar date',
    },
    // Admin routes.
    {
      name: 'key name empty',
      method: 'POST',
      path: () => `/api/v1/projects/${a.id}/keys`,
      options: () => ({ key: h.adminKey, json: { name: '' } }),
      status: 400,
      names: 'name: name should not be empty',
    },
    {
      name: 'key name a number',
      method: 'POST',
      path: () => `/api/v1/projects/${a.id}/keys`,
      options: () => ({ key: h.adminKey, json: { name: 5 } }),
      status: 400,
      names: 'name:',
    },
    {
      name: 'key name of 201 characters',
      method: 'POST',
      path: () => `/api/v1/projects/${a.id}/keys`,
      options: () => ({ key: h.adminKey, json: { name: 'k'.repeat(201) } }),
      status: 400,
      names: 'name:',
    },
    {
      name: 'keyId not a UUID',
      method: 'DELETE',
      path: () => `/api/v1/projects/${a.id}/keys/abc`,
      options: () => ({ key: h.adminKey }),
      status: 400,
      names: 'keyId: must be a UUID',
    },
    {
      name: 'project without a name',
      method: 'POST',
      path: () => '/api/v1/projects',
      options: () => ({ key: h.adminKey, json: {} }),
      status: 400,
      names: 'name:',
    },
    {
      name: 'project name with a lone surrogate',
      method: 'POST',
      path: () => '/api/v1/projects',
      options: () => ({ key: h.adminKey, raw: '{"name":"\\udfff"}' }),
      status: 400,
      names: 'name: must be valid Unicode',
    },
  ];

  const codes = new Set<string>(ASK_ERROR_CODES);
  const seen: Array<{ name: string; status: number }> = [];

  it(`has at least 60 cases (${cases.length})`, () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s → the typed 4xx naming the field', async (_name, c) => {
    const reply = await h.call(c.method, c.path(), c.options?.());
    seen.push({ name: c.name, status: reply.status });
    expect(reply.body).toEqual(expect.objectContaining({ error: expect.any(String), code: expect.any(String) }));
    expect(codes.has(reply.body!.code!)).toBe(true);
    expect(reply.status).toBe(c.status);
    const details = reply.body?.details ?? '';
    if (typeof c.names === 'string') expect(details).toContain(c.names);
    else expect(details).toMatch(c.names);
    expect(reply.headers.get('set-cookie')).toBeNull();
  });

  it('gave no 5xx', () => {
    expect(seen.length).toBe(cases.length);
    expect(seen.filter((s) => s.status >= 500)).toEqual([]);
  });

  it('still answers /health', async () => {
    const reply = await h.call('GET', '/health');
    expect([reply.status, reply.body]).toEqual([200, { status: 'ok' }]);
  });

  it('left every table unchanged (row counts and row checksums)', async () => {
    expect(await tableChecksum(h)).toEqual(before);
  });
});
