import { type Harness, type Reply, localProject, startGateway } from './gateway-harness';

/**
 * Secrets suite: a planted provider key (sent as project credentials, ASK_ENCRYPTION_KEY set) and a
 * planted API key appear in no response body, no error body, no SSE event and no line the gateway
 * process logs (Nest's logger output captured from stdout/stderr at LOG_LEVEL=verbose); the provider
 * key is found only inside the encrypted column, and there only as ciphertext.
 */
describe('secrets never leave (real gateway, PostgreSQL and Redis)', () => {
  const PROVIDER_KEY = 'sk-planted-PROVIDER-7f3c9a1e5b2d4c6a8e0f1a2b3c4d5e6f';
  let h: Harness;
  let project: { id: string; key: string; keyId: string };
  const replies: Reply[] = [];

  beforeAll(async () => {
    h = await startGateway();
    project = await localProject(h, 'secrets');
    const as = (method: string, path: string, json?: unknown) =>
      h.call(method, path, { key: project.key, json }).then((r) => (replies.push(r), r));
    const base = `/api/v1/projects/${project.id}`;
    await as('PATCH', base, { credentials: { apiKey: PROVIDER_KEY } });
    await as('GET', base);
    // Error paths that carry the key in the body: bad fields beside it, a too-long key, an unknown field.
    await as('PATCH', base, { credentials: { apiKey: PROVIDER_KEY, password: PROVIDER_KEY } });
    await as('PATCH', base, { credentials: { apiKey: PROVIDER_KEY + 'x'.repeat(4000) } });
    await as('PATCH', base, { llm: { provider: 'openai', model: PROVIDER_KEY, baseUrl: PROVIDER_KEY } });
    await as('POST', `${base}/ask`, { question: 'Which credentials are stored?' });
    const accepted = replies[replies.length - 1].body as { askId: string; eventsUrl: string };
    replies.push(await h.call('GET', accepted.eventsUrl));
    replies.push(await h.call('GET', `/api/v1/asks/${accepted.askId}/events`, { key: project.key }));
    await as('POST', `${base}/ask`, { question: PROVIDER_KEY, sessionId: PROVIDER_KEY });
    await as('POST', `${base}/knowledge`, { documents: [{ uri: PROVIDER_KEY, text: 5 }] });
    await as('POST', `${base}/knowledge`, { documents: [{ uri: 'notes.md', text: 'Which credentials are stored?' }] });
    const ingestion = replies[replies.length - 1].body as { statusUrl: string; eventsUrl: string };
    await as('GET', ingestion.statusUrl);
    await as('GET', `${base}/sessions/${PROVIDER_KEY}`);
    // The API key itself in wrong places: a wrong route, a revoked copy, a malformed header.
    replies.push(await h.call('GET', `/api/v1/projects/${project.key}`, { key: project.key }));
    replies.push(await h.call('GET', base, { headers: { authorization: `Bearer ${project.key} extra` } }));
    replies.push(await h.call('GET', base, { headers: { authorization: `Basic ${project.key}` } }));
    replies.push(await h.call('POST', '/api/v1/projects', { key: project.key, json: { name: project.key } }));
    replies.push(await h.call('GET', base, { key: project.key.slice(0, -1) + 'Z' }));
    replies.push(await h.call('GET', '/metrics'));
  }, 60_000);
  afterAll(() => h?.close());

  const secrets = () => [PROVIDER_KEY, project.key, project.key.slice(4 + 12 + 1)];

  it('sent the requests (a mix of 2xx, 4xx and SSE)', () => {
    const statuses = replies.map((r) => r.status);
    expect(statuses).toContain(200);
    expect(statuses).toContain(202);
    expect(statuses).toContain(400);
    expect(statuses).toContain(401);
    expect(replies.some((r) => r.text.includes('event: accepted'))).toBe(true);
  });

  it('no response body, error body or SSE event holds the provider key or the API key', () => {
    for (const reply of replies) for (const secret of secrets()) expect(reply.text).not.toContain(secret);
  });

  it('no response header holds them', () => {
    for (const reply of replies) {
      const pairs: string[] = [];
      reply.headers.forEach((value, name) => pairs.push(`${name}: ${value}`));
      const headers = pairs.join('\n');
      for (const secret of secrets()) expect(headers).not.toContain(secret);
    }
  });

  it('no log line of the gateway holds them (LOG_LEVEL=verbose)', () => {
    const logs = h.logs();
    expect(logs.length).toBeGreaterThan(0);
    // The gateway's own JSON lines were captured (pino writes to fd 1 directly), not only jest's output.
    expect(logs).toContain('"app":"api-gateway"');
    for (const secret of secrets()) expect(logs).not.toContain(secret);
  });

  it('the provider key is stored only encrypted, and the API key only as a hash', async () => {
    const [row] = await h.db.dataSource.query(
      'SELECT row_to_json(p)::text AS whole, credentials_encrypted FROM projects p WHERE id = $1',
      [project.id],
    );
    expect(row.credentials_encrypted).not.toBeNull();
    expect(row.whole).not.toContain(PROVIDER_KEY);
    expect(Buffer.from(row.credentials_encrypted).includes(Buffer.from(PROVIDER_KEY))).toBe(false);
    expect(await h.projects.getCredentials(project.id)).toEqual({ apiKey: PROVIDER_KEY });
    const keys: Array<{ whole: string }> = await h.db.dataSource.query(
      'SELECT row_to_json(k)::text AS whole FROM api_keys k',
    );
    for (const k of keys) for (const secret of secrets().slice(1)) expect(k.whole).not.toContain(secret);
  });
});
