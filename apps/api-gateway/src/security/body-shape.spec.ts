import { type Harness, localProject, startGateway } from './gateway-harness';

/** `{ f0: 1, …, f<n-1>: 1 }`. */
const fields = (n: number): Record<string, number> =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, 1]));

/**
 * Wide bodies against the real gateway. class-transformer handles an object's keys in time quadratic
 * in their count: one PATCH of 600,000 unknown fields (7 MB, under the 8 MiB limit) held the gateway's
 * event loop for minutes (every tenant's requests, `/health` included, waited). The text-safety pipe
 * now bounds the fields of one object and the values of a whole body before class-transformer runs:
 * typed 400s naming where, nothing stored; the largest valid bodies still pass.
 */
describe('wide bodies (real gateway, PostgreSQL and Redis)', () => {
  let h: Harness;
  let project: { id: string; key: string };

  beforeAll(async () => {
    h = await startGateway({ INGEST_RATE_LIMIT_PER_MINUTE: '1000' });
    project = await localProject(h, 'wide');
  }, 60_000);
  afterAll(() => h?.close());

  const send = async (method: string, path: string, json: unknown): Promise<string> => {
    const reply = await h.call(method, `/api/v1/projects/${project.id}${path}`, { key: project.key, json });
    return `${reply.status} ${reply.body?.code} ${reply.body?.details}`;
  };

  it('lets 64 fields through to validation (each unknown one named), and refuses 65 before it', async () => {
    const at = await h.call('PATCH', `/api/v1/projects/${project.id}`, { key: project.key, json: fields(64) });
    // The filter shortens long details; the first lines are the whitelist's, one per unknown field.
    expect([at.status, at.body?.details?.split('; ').slice(0, 2)]).toEqual([
      400,
      ['f0: property f0 should not exist', 'f1: property f1 should not exist'],
    ]);
    expect(await send('PATCH', '', fields(65))).toBe('400 invalid_request body: too many fields (at most 64)');
  });

  it('refuses 600,000 unknown fields (7 MB) with one line before parsing them', async () => {
    const raw = `{${Array.from({ length: 600_000 }, (_, i) => `"f${i}":1`).join(',')}}`;
    const reply = await h.call('PATCH', `/api/v1/projects/${project.id}`, { key: project.key, raw });
    expect(`${reply.status} ${reply.body?.code} ${reply.body?.details}`).toBe(
      '400 invalid_request body: too many values (at most 50,000)',
    );
  }, 60_000);

  it('counts no comma, bracket or brace inside a string (escaped quotes and backslashes included)', async () => {
    const text = 'a, [b], {c}, "d" \\" e\\'.repeat(20_000);
    const reply = await h.call('POST', `/api/v1/projects/${project.id}/knowledge`, {
      key: project.key,
      json: { documents: [{ uri: 'commas.txt', text }] },
    });
    expect([reply.status, typeof reply.body?.['ingestionId']]).toEqual([202, 'string']);
  });

  it('names a nested object with too many fields (llm)', async () => {
    const llm = { provider: 'local', model: 'local', ...fields(63) };
    expect(await send('PATCH', '', { llm: { provider: 'local', model: 'local', ...fields(62) } })).toMatch(
      /^400 invalid_request llm\.f0: property f0 should not exist; /,
    );
    expect(await send('PATCH', '', { llm })).toBe('400 invalid_request llm: too many fields (at most 64)');
  });

  it('refuses a body of more than 50,000 values (25,000 two-field documents: 75,001 separators)', async () => {
    const documents = Array.from({ length: 25_000 }, () => ({ uri: 'a', text: 'b' }));
    expect(await send('POST', '/knowledge', { documents })).toBe(
      '400 invalid_request body: too many values (at most 50,000)',
    );
  });

  it('left the project as it was', async () => {
    const stored = await h.projects.findById(project.id);
    expect([stored?.name, stored?.llmSettings, stored?.topK]).toEqual([
      'wide',
      { provider: 'local', model: 'local' },
      8,
    ]);
  });

  it('accepts the largest valid insights body: 5,000 insights and 5,000 recommendations (40,003 values)', async () => {
    const insights = Array.from({ length: 5_000 }, (_, i) => ({
      id: `i${i}`,
      name: `insight ${i}`,
      description: 'text',
    }));
    const recommendations = Array.from({ length: 5_000 }, (_, i) => ({
      id: `r${i}`,
      title: `advice ${i}`,
      body: 'text',
    }));
    const reply = await h.call('POST', `/api/v1/projects/${project.id}/insights`, {
      key: project.key,
      json: { insights, recommendations },
    });
    expect([reply.status, typeof reply.body?.['ingestionId']]).toEqual([202, 'string']);
  }, 60_000);
});
