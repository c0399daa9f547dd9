import { type Harness, startGateway } from '../security/gateway-harness';

/**
 * The gateway's `/metrics` with ASK_METRICS_TOKEN set (issue 25 item 5): the bearer token or a typed
 * 401; `/health` stays open for probes. Real gateway, PostgreSQL and Redis.
 */
describe('the gateway /metrics behind ASK_METRICS_TOKEN', () => {
  const token = `metrics-${'t'.repeat(24)}`;
  let h: Harness;

  beforeAll(async () => {
    h = await startGateway({ ASK_METRICS_TOKEN: token });
  }, 60_000);
  afterAll(async () => {
    delete process.env['ASK_METRICS_TOKEN'];
    await h?.close();
  });

  const scrape = async (authorization?: string) => {
    const reply = await h.call('GET', '/metrics', { headers: authorization ? { authorization } : {} });
    return reply.status === 200 ? [200, reply.text.includes('process_cpu_seconds_total')] : [reply.status, reply.body];
  };

  it('answers 401 without the token, with another token, or with the admin key', async () => {
    const refused = [
      401,
      {
        error: 'authentication is required',
        code: 'unauthorized',
        details: '/metrics: the operator requires ASK_METRICS_TOKEN in the Authorization header',
      },
    ];
    expect(await scrape()).toEqual(refused);
    expect(await scrape(`Bearer ${token}x`)).toEqual(refused);
    expect(await scrape(`Bearer ${h.adminKey}`)).toEqual(refused);
  });

  it('serves the Prometheus text with the token; /health needs none', async () => {
    expect(await scrape(`Bearer ${token}`)).toEqual([200, true]);
    const health = await h.call('GET', '/health');
    expect([health.status, health.body]).toEqual([200, { status: 'ok' }]);
  });
});
