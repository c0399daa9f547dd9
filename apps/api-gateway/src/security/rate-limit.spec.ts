import { type Harness, localProject, startGateway } from './gateway-harness';

/**
 * Rate limits per project, counted in Redis: 3 asks and 2 ingestion calls a minute here
 * (ASK_RATE_LIMIT_PER_MINUTE, INGEST_RATE_LIMIT_PER_MINUTE); the next call is a 429 `rate_limited`
 * with `Retry-After` in seconds, and another project's budget is untouched.
 */
describe('rate limits (real gateway and Redis)', () => {
  let h: Harness;
  let a: { id: string; key: string };
  let b: { id: string; key: string };

  beforeAll(async () => {
    h = await startGateway({ ASK_RATE_LIMIT_PER_MINUTE: '3', INGEST_RATE_LIMIT_PER_MINUTE: '2' });
    a = await localProject(h, 'A');
    b = await localProject(h, 'B');
  }, 60_000);
  afterAll(() => h?.close());

  const ask = (p: { id: string; key: string }) =>
    h.call('POST', `/api/v1/projects/${p.id}/ask`, { key: p.key, json: { question: 'How fast?' } });

  it('answers the 4th ask of a minute with 429 rate_limited and Retry-After', async () => {
    expect([(await ask(a)).status, (await ask(a)).status, (await ask(a)).status]).toEqual([202, 202, 202]);
    const limited = await ask(a);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({
      error: 'too many requests',
      code: 'rate_limited',
      details: expect.stringMatching(/^retry_after=\d+$/),
    });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.body?.details).toBe(`retry_after=${retryAfter}`);
    // Four asks on a shared 2-core machine can take longer than jest's default 5 s; no time is asserted.
  }, 30_000);

  it("leaves another project's budget untouched", async () => {
    expect((await ask(b)).status).toBe(202);
  });

  it('keeps the counter in Redis under ASK_KEY_PREFIX (shared by every gateway replica)', async () => {
    const keys = await h.redis.keys(`{${h.prefix}:rate:ask:project:${a.id}:ask}:*`);
    expect(keys.sort()).toEqual([
      `{${h.prefix}:rate:ask:project:${a.id}:ask}:blocked`,
      `{${h.prefix}:rate:ask:project:${a.id}:ask}:hits`,
    ]);
  });

  it('limits ingestion separately: the 3rd call of a minute is a 429', async () => {
    const ingest = () =>
      h.call('POST', `/api/v1/projects/${b.id}/insights`, {
        key: b.key,
        json: { insights: [{ id: 'i1', name: 'n', description: 'd' }] },
      });
    expect([(await ingest()).status, (await ingest()).status, (await ingest()).status]).toEqual([202, 202, 429]);
  });

  it('counts an upper-cased or mixed-case project id as the same project (admin key): the 4th ask is a 429', async () => {
    const c = await localProject(h, 'C');
    const mixed = c.id.replace(/[a-f]/g, (x, i: number) => (i % 2 ? x.toUpperCase() : x));
    const asAdmin = (id: string) =>
      h.call('POST', `/api/v1/projects/${id}/ask`, { key: h.adminKey, json: { question: 'How fast?' } });
    const statuses = [];
    for (const id of [c.id, c.id.toUpperCase(), mixed, c.id.toUpperCase()]) statuses.push((await asAdmin(id)).status);
    expect(statuses).toEqual([202, 202, 202, 429]);
    const keys = await h.redis.keys(`{${h.prefix}:rate:ask:project:*`);
    expect(keys.filter((k) => k.toLowerCase().includes(c.id)).every((k) => k.includes(c.id))).toBe(true);
  }, 30_000);

  it('does not limit reads', async () => {
    for (let i = 0; i < 5; i += 1)
      expect((await h.call('GET', `/api/v1/projects/${a.id}/sessions`, { key: a.key })).status).toBe(200);
  });
});
