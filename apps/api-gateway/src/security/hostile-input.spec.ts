import { tiktokenCounter, type BpeWork } from '@ask/token-counting';
import { type Harness, localProject, startGateway } from './gateway-harness';

/**
 * Hostile questions of issue 10 against the real gateway (in this process, so the counter's work
 * counters are the gateway's): each gets its typed answer, the question is counted once, and the
 * counting work is bounded by the question's bytes (never a time: see bench/hostile for the times).
 */
describe('hostile questions (real gateway, PostgreSQL and Redis)', () => {
  let h: Harness;
  let project: { id: string; key: string };
  const o200k = tiktokenCounter('o200k_base');

  beforeAll(async () => {
    h = await startGateway({ ASK_RATE_LIMIT_PER_MINUTE: '100000' });
    project = await localProject(h, 'hostile');
  }, 60_000);
  afterAll(() => h?.close());

  const delta = (before: BpeWork, after: BpeWork) => ({
    texts: after.texts - before.texts,
    bytes: after.bytes - before.bytes,
    pretokens: after.pretokens - before.pretokens,
    merges: after.merges - before.merges,
    rankLookups: after.rankLookups - before.rankLookups,
  });

  const tooMany = (tokens: number) => `question: question must be at most 4000 tokens (o200k_base), got ${tokens}`;
  it.each([
    {
      name: '3,000 × 🧪 (6,000 UTF-16 units; froze the gateway 19 s): 400, 9,000 tokens',
      question: '🧪'.repeat(3_000),
      status: 400,
      details: tooMany(9_000),
    },
    { name: '8,000 × 规: 400, 8,000 tokens', question: '规'.repeat(8_000), status: 400, details: tooMany(8_000) },
    {
      name: '7,999 × ก (Thai, one run): 400, 7,999 tokens',
      question: 'ก'.repeat(7_999),
      status: 400,
      details: tooMany(7_999),
    },
    {
      name: '1,000 × 👨‍👩‍👧 (ZWJ families, exactly 8,000 UTF-16 units): 400, 8,000 tokens',
      question: '👨‍👩‍👧'.repeat(1_000),
      status: 400,
      details: tooMany(8_000),
    },
    {
      name: '"a" × 8,000 (a valid 1,000-token question; froze the gateway 9 s): 202',
      question: 'a'.repeat(8_000),
      status: 202,
      details: undefined,
    },
    {
      name: '"a" × 3,999 + " " + "b" × 4,000: 202',
      question: `${'a'.repeat(3_999)} ${'b'.repeat(4_000)}`,
      status: 202,
      details: undefined,
    },
  ])('$name; the question is counted once, work bounded by its bytes', async ({ question, status, details }) => {
    const before = o200k.work();
    const reply = await h.call('POST', `/api/v1/projects/${project.id}/ask`, { key: project.key, json: { question } });
    const done = delta(before, o200k.work());
    expect(reply.status).toBe(status);
    if (details)
      expect(reply.body).toMatchObject({ code: 'invalid_request', details: expect.stringContaining(details) });
    else expect(reply.body).toMatchObject({ askId: expect.any(String), sessionId: expect.any(String) });
    // Counted once: one text of exactly the question's bytes (the error message reuses the count).
    expect(done.texts).toBe(1);
    expect(done.bytes).toBe(Buffer.byteLength(question, 'utf8'));
    expect(done.merges).toBeLessThanOrEqual(done.bytes - done.pretokens);
    expect(done.rankLookups).toBeLessThanOrEqual(done.pretokens + 3 * done.bytes);
  });

  it.each([
    {
      name: '"a" × 6,000 + " " + "b" × 6,000 (12 KB; froze the gateway 13 s)',
      text: `${'a'.repeat(6_000)} ${'b'.repeat(6_000)}`,
    },
    {
      name: '1 MB of base64 (took 19.4 s inside the gateway)',
      text: Buffer.from(Array.from({ length: 750_000 }, (_, i) => (i * 7919) % 251)).toString('base64'),
    },
    {
      name: '"a" × 999,999 + " " + "b" × 1,000,000 (2 MB, two words)',
      text: `${'a'.repeat(999_999)} ${'b'.repeat(1_000_000)}`,
    },
  ])(
    'answers a knowledge upload of $name with 202 and a queued ingestion, counting no token on the gateway',
    async ({ text }) => {
      const before = o200k.work();
      const reply = await h.call('POST', `/api/v1/projects/${project.id}/knowledge`, {
        key: project.key,
        json: { documents: [{ uri: 'hostile.txt', text }] },
      });
      expect(reply.status).toBe(202);
      expect(reply.body).toMatchObject({ ingestionId: expect.any(String) });
      expect(delta(before, o200k.work())).toEqual({ texts: 0, bytes: 0, pretokens: 0, merges: 0, rankLookups: 0 });
      const status = await h.call(
        'GET',
        `/api/v1/projects/${project.id}/ingestions/${(reply.body as { ingestionId: string }).ingestionId}`,
        { key: project.key },
      );
      expect(status.status).toBe(200);
      expect(status.body).toMatchObject({
        kind: 'knowledge',
        status: 'queued',
        counts: { total: 1, done: 0, chunks: 0 },
      });
    },
  );

  it('does not count a question over 8,000 characters at all (400 on its length)', async () => {
    const before = o200k.work();
    const reply = await h.call('POST', `/api/v1/projects/${project.id}/ask`, {
      key: project.key,
      json: { question: '规'.repeat(8_001) },
    });
    expect(reply.status).toBe(400);
    expect(delta(before, o200k.work()).texts).toBe(0);
  });
});
