import { type Harness, startGateway } from '../security/gateway-harness';

// The real gateway on a throwaway database: a project's conversation memory settings (issue 16 item 4).
describe('PATCH /api/v1/projects/:projectId memory settings', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startGateway();
  }, 60_000);
  afterAll(() => h?.close());

  it('reads null (the defaults: per-turn, the project model, 96 tokens) until set, then stores what was sent', async () => {
    const project = await h.projects.create({ name: 'memory', llmSettings: { provider: 'local', model: 'local' } });
    const read = await h.call('GET', `/api/v1/projects/${project.id}`, { key: h.adminKey });
    expect(read.body?.['memorySettings']).toBeNull();
    const memory = { mode: 'compaction', summaryModel: 'extractive', summaryMaxTokens: 64 };
    const patched = await h.call('PATCH', `/api/v1/projects/${project.id}`, { key: h.adminKey, json: { memory } });
    expect(patched.status).toBe(200);
    expect(patched.body?.['memorySettings']).toEqual(memory);
    const [row] = await h.db.dataSource.query('SELECT memory_settings FROM projects WHERE id = $1', [project.id]);
    expect(row.memory_settings).toEqual(memory);
    const cleared = await h.call('PATCH', `/api/v1/projects/${project.id}`, {
      key: h.adminKey,
      json: { memory: null },
    });
    expect(cleared.body?.['memorySettings']).toBeNull();
  });

  it.each([
    [
      'an unknown mode',
      { mode: 'always' },
      'memory.mode: mode must be one of the following values: off, per-turn, compaction',
    ],
    [
      'a length budget below 16 tokens',
      { summaryMaxTokens: 8 },
      'memory.summaryMaxTokens: summaryMaxTokens must not be less than 16',
    ],
    [
      'a fractional length budget',
      { summaryMaxTokens: 40.5 },
      'memory.summaryMaxTokens: summaryMaxTokens must be an integer number',
    ],
    ['an empty summary model', { summaryModel: '' }, 'memory.summaryModel: summaryModel should not be empty'],
    [
      'an unknown field',
      { summariseEverything: true },
      'memory.summariseEverything: property summariseEverything should not exist',
    ],
  ])('refuses %s with a typed 400 and stores nothing', async (_label, memory, details) => {
    const project = await h.projects.create({ name: 'memory-bad', llmSettings: { provider: 'local', model: 'local' } });
    const res = await h.call('PATCH', `/api/v1/projects/${project.id}`, { key: h.adminKey, json: { memory } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'the request is invalid', code: 'invalid_request', details });
    const [row] = await h.db.dataSource.query('SELECT memory_settings FROM projects WHERE id = $1', [project.id]);
    expect(row.memory_settings).toBeNull();
  });
});
