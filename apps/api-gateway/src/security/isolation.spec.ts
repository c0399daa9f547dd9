import { randomUUID } from 'node:crypto';
import { type Harness, localProject, startGateway } from './gateway-harness';

/**
 * Isolation suite: every route of the gateway, with project B's resources and project A's key (404,
 * as if they did not exist), with no key (401), with a revoked key (401), and the admin routes with a
 * project key (401: admin routes answer 401 `unauthorized`, not 403, to any key but the admin key).
 */
describe('tenant isolation (real gateway, PostgreSQL and Redis)', () => {
  let h: Harness;
  let a: { id: string; key: string; keyId: string };
  let b: { id: string; key: string; keyId: string };
  let revokedKey: string;
  let bAsk: { askId: string; sessionId: string; eventsUrl: string };
  let aAsk: { askId: string; sessionId: string; eventsUrl: string };
  let bIngestion: { ingestionId: string; eventsUrl: string; statusUrl: string };

  beforeAll(async () => {
    h = await startGateway();
    a = await localProject(h, 'A');
    b = await localProject(h, 'B');
    const revoked = await h.keys.create(a.id, 'revoked');
    await h.keys.revoke(a.id, revoked.id);
    revokedKey = revoked.key;
    bAsk = (
      await h.call('POST', `/api/v1/projects/${b.id}/ask`, { key: b.key, json: { question: 'What does B know?' } })
    ).body as typeof bAsk;
    // Stored and queued (no ingestion worker runs in this suite): enough for its routes to exist.
    bIngestion = (
      await h.call('POST', `/api/v1/projects/${b.id}/knowledge`, {
        key: b.key,
        json: { documents: [{ uri: 'b.md', text: 'B only' }] },
      })
    ).body as typeof bIngestion;
    aAsk = (
      await h.call('POST', `/api/v1/projects/${a.id}/ask`, { key: a.key, json: { question: 'What does A know?' } })
    ).body as typeof aAsk;
  }, 60_000);
  afterAll(() => h?.close());

  /** Every project route, aimed at project B's resources. */
  const routesOfB = (): Array<[string, string, unknown?]> => [
    ['GET', `/api/v1/projects/${b.id}`],
    ['PATCH', `/api/v1/projects/${b.id}`, { name: 'taken over' }],
    ['POST', `/api/v1/projects/${b.id}/ask`, { question: 'Tell me B secrets' }],
    ['GET', `/api/v1/asks/${bAsk.askId}/events`],
    ['GET', `/api/v1/projects/${b.id}/sessions`],
    ['GET', `/api/v1/projects/${b.id}/sessions/${bAsk.sessionId}`],
    ['DELETE', `/api/v1/projects/${b.id}/sessions/${bAsk.sessionId}`],
    ['POST', `/api/v1/projects/${b.id}/knowledge`, { documents: [{ uri: 'x.md', text: 'planted' }] }],
    ['POST', `/api/v1/projects/${b.id}/insights`, { insights: [{ id: 'i', name: 'n', description: 'd' }] }],
    ['POST', `/api/v1/projects/${b.id}/reembed`],
    ['GET', `/api/v1/projects/${b.id}/ingestions/${bIngestion.ingestionId}`],
    ['GET', `/api/v1/projects/${b.id}/ingestions/${bIngestion.ingestionId}/events`],
    // A's own routes pointing at B's session and B's ingestion.
    ['POST', `/api/v1/projects/${a.id}/ask`, { question: 'Continue B?', sessionId: bAsk.sessionId }],
    ['GET', `/api/v1/projects/${a.id}/sessions/${bAsk.sessionId}`],
    ['DELETE', `/api/v1/projects/${a.id}/sessions/${bAsk.sessionId}`],
    ['GET', `/api/v1/projects/${a.id}/ingestions/${bIngestion.ingestionId}`],
    ['GET', `/api/v1/projects/${a.id}/ingestions/${bIngestion.ingestionId}/events`],
  ];

  const adminRoutes = (): Array<[string, string, unknown?]> => [
    ['POST', '/api/v1/projects', { name: 'new' }],
    ['GET', '/api/v1/projects'],
    ['POST', `/api/v1/projects/${a.id}/keys`, {}],
    ['GET', `/api/v1/projects/${a.id}/keys`],
    ['DELETE', `/api/v1/projects/${a.id}/keys/${a.keyId}`],
  ];

  describe("project A's key on project B's resources", () => {
    it.each(Array.from({ length: 17 }, (_, i) => i))('route %i answers 404 not_found', async (i) => {
      const [method, path, json] = routesOfB()[i];
      const reply = await h.call(method, path, { key: a.key, json });
      expect([method, path, reply.status, reply.body?.code]).toEqual([method, path, 404, 'not_found']);
    });

    it("left B's session and its project untouched", async () => {
      expect(await h.sessions.findForProject(b.id, bAsk.sessionId)).not.toBeNull();
      expect((await h.projects.findById(b.id))?.name).toBe('B');
      const [{ n }] = await h.db.dataSource.query(
        'SELECT count(*)::int AS n FROM knowledge_chunks WHERE project_id = $1',
        [b.id],
      );
      expect(n).toBe(0);
      const ingestions = await h.db.dataSource.query('SELECT kind, status FROM ingestions WHERE project_id = $1', [
        b.id,
      ]);
      expect(ingestions).toEqual([{ kind: 'knowledge', status: 'queued' }]);
    });

    it("answers 404 for an unknown project, the same as for B's", async () => {
      const reply = await h.call('GET', `/api/v1/projects/${randomUUID()}/sessions`, { key: a.key });
      expect([reply.status, reply.body]).toEqual([
        404,
        { error: 'not found', code: 'not_found', details: 'project not found' },
      ]);
      const ofB = await h.call('GET', `/api/v1/projects/${b.id}/sessions`, { key: a.key });
      expect(ofB.body).toEqual(reply.body);
    });
  });

  describe('no key, a malformed header, a revoked key', () => {
    const everyRoute = () => [...routesOfB(), ...adminRoutes()];

    it.each(Array.from({ length: 22 }, (_, i) => i))('route %i answers 401 unauthorized without a key', async (i) => {
      const [method, path, json] = everyRoute()[i];
      const reply = await h.call(method, path, { json });
      expect([method, path, reply.status, reply.body?.code]).toEqual([method, path, 401, 'unauthorized']);
    });

    it.each(Array.from({ length: 22 }, (_, i) => i))(
      'route %i answers 401 unauthorized with a revoked key',
      async (i) => {
        const [method, path, json] = everyRoute()[i];
        const reply = await h.call(method, path, { key: revokedKey, json });
        expect([method, path, reply.status, reply.body?.code]).toEqual([method, path, 401, 'unauthorized']);
      },
    );

    it.each([
      ['Basic dXNlcjpwYXNz'],
      ['Bearer'],
      ['Bearer ask_xxxxxxxxxxxx_yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy'],
      ['bearer  two spaces'],
    ])('answers 401 for Authorization: %s', async (header) => {
      const reply = await h.call('GET', `/api/v1/projects/${a.id}`, { headers: { authorization: header } });
      expect([reply.status, reply.body?.code]).toEqual([401, 'unauthorized']);
    });

    it("a revoked key's project still answers its other keys", async () => {
      expect((await h.call('GET', `/api/v1/projects/${a.id}`, { key: a.key })).status).toBe(200);
    });
  });

  describe('admin routes with a project key', () => {
    it.each([0, 1, 2, 3, 4])(
      'admin route %i answers 401 unauthorized (admin key required), even on its own project',
      async (i) => {
        const [method, path, json] = adminRoutes()[i];
        const reply = await h.call(method, path, { key: a.key, json });
        expect([method, path, reply.status, reply.body]).toEqual([
          method,
          path,
          401,
          { error: 'authentication is required', code: 'unauthorized', details: 'admin key required' },
        ]);
      },
    );
  });

  describe('the events route', () => {
    it("streams an ask to a key of the ask's project", async () => {
      const reply = await h.call('GET', `/api/v1/asks/${aAsk.askId}/events`, { key: a.key });
      expect(reply.status).toBe(200);
      expect(reply.text).toContain('event: accepted');
    });

    it('streams an ask to its capability token, with no key (EventSource)', async () => {
      expect(aAsk.eventsUrl).toMatch(/^\/api\/v1\/asks\/[0-9a-f-]{36}\/events\?token=[A-Za-z0-9_-]{43}$/);
      const reply = await h.call('GET', aAsk.eventsUrl);
      expect(reply.status).toBe(200);
      expect(reply.text).toContain(`"askId":"${aAsk.askId}"`);
    });

    it("refuses B's token on A's ask (401), and a token with one character changed", async () => {
      const token = new URL(bAsk.eventsUrl, h.baseUrl).searchParams.get('token')!;
      expect((await h.call('GET', `/api/v1/asks/${aAsk.askId}/events?token=${token}`)).status).toBe(401);
      const own = new URL(aAsk.eventsUrl, h.baseUrl).searchParams.get('token')!;
      const flipped = own.slice(0, -1) + (own.endsWith('A') ? 'B' : 'A');
      expect((await h.call('GET', `/api/v1/asks/${aAsk.askId}/events?token=${flipped}`)).status).toBe(401);
    });

    it('the admin key reads any ask', async () => {
      expect((await h.call('GET', `/api/v1/asks/${bAsk.askId}/events`, { key: h.adminKey })).status).toBe(200);
    });

    it('answers 404 for an unknown ask, with a project key', async () => {
      const reply = await h.call('GET', `/api/v1/asks/${randomUUID()}/events`, { key: a.key });
      expect([reply.status, reply.body?.code]).toEqual([404, 'not_found']);
    });
  });

  describe('the ingestion routes', () => {
    it("answers B's ingestion to B's key and to the admin key, with its status", async () => {
      expect(bIngestion.statusUrl).toBe(`/api/v1/projects/${b.id}/ingestions/${bIngestion.ingestionId}`);
      expect(bIngestion.eventsUrl).toBe(`${bIngestion.statusUrl}/events`);
      for (const key of [b.key, h.adminKey]) {
        const reply = await h.call('GET', bIngestion.statusUrl, { key });
        expect([reply.status, reply.body?.['kind'], reply.body?.['status'], reply.body?.['counts']]).toEqual([
          200,
          'knowledge',
          'queued',
          { total: 1, done: 0, created: 0, replaced: 0, unchanged: 0, failed: 0, chunks: 0 },
        ]);
      }
    });

    it('answers 404 for an unknown ingestion of its own project', async () => {
      const reply = await h.call('GET', `/api/v1/projects/${a.id}/ingestions/${randomUUID()}`, { key: a.key });
      expect([reply.status, reply.body]).toEqual([
        404,
        { error: 'not found', code: 'not_found', details: 'ingestion not found' },
      ]);
    });
  });

  describe('the admin key', () => {
    it('creates a project, lists projects, creates a key shown once, lists keys without secrets, revokes a key', async () => {
      const created = await h.call('POST', '/api/v1/projects', { key: h.adminKey, json: { name: 'C' } });
      expect(created.status).toBe(201);
      const c = created.body as { id: string };
      const list = await h.call('GET', '/api/v1/projects', { key: h.adminKey });
      expect((list.body as unknown as { projects: Array<{ id: string }> }).projects.map((p) => p.id)).toEqual(
        expect.arrayContaining([a.id, b.id, c.id]),
      );

      const key = await h.call('POST', `/api/v1/projects/${c.id}/keys`, { key: h.adminKey, json: { name: 'ci' } });
      expect(key.status).toBe(201);
      const k = key.body as unknown as { id: string; key: string; prefix: string; name: string };
      expect(k.key).toMatch(/^ask_[A-Za-z0-9_-]{12}_[A-Za-z0-9_-]{43}$/);
      expect(k.key.startsWith(`ask_${k.prefix}_`)).toBe(true);
      expect((await h.call('GET', `/api/v1/projects/${c.id}`, { key: k.key })).status).toBe(200);

      const keys = await h.call('GET', `/api/v1/projects/${c.id}/keys`, { key: h.adminKey });
      expect(keys.status).toBe(200);
      expect(keys.text).not.toContain(k.key.slice(4 + 12 + 1));
      expect(keys.text).not.toMatch(/hash/i);
      expect((keys.body as unknown as { keys: unknown[] }).keys).toEqual([
        { id: k.id, projectId: c.id, prefix: k.prefix, name: 'ci', createdAt: expect.any(String), revokedAt: null },
      ]);

      expect((await h.call('DELETE', `/api/v1/projects/${c.id}/keys/${k.id}`, { key: h.adminKey })).status).toBe(204);
      expect((await h.call('GET', `/api/v1/projects/${c.id}`, { key: k.key })).status).toBe(401);
      expect(
        (await h.call('DELETE', `/api/v1/projects/${c.id}/keys/${randomUUID()}`, { key: h.adminKey })).status,
      ).toBe(404);
      expect(
        (await h.call('POST', `/api/v1/projects/${randomUUID()}/keys`, { key: h.adminKey, json: {} })).status,
      ).toBe(404);
    });
  });

  describe('open routes', () => {
    it.each(['/health', '/metrics'])('%s answers 200 without a key', async (path) => {
      expect((await h.call('GET', path)).status).toBe(200);
    });
  });

  describe('ids', () => {
    it('ask ids and session ids are random UUIDv4', () => {
      for (const id of [aAsk.askId, aAsk.sessionId, bAsk.askId, bAsk.sessionId]) {
        expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      }
    });
  });
});
