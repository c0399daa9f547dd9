import { type Harness, startGateway } from '../security/gateway-harness';

// The real gateway on a throwaway database: what a project does with items below the relevance floor (issue 32).
describe('PATCH /api/v1/projects/:projectId retrieval.lowRelevance', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startGateway();
  }, 60_000);
  afterAll(() => h?.close(), 30_000);

  it('stores `never` beside the method and reads it back', async () => {
    const project = await h.projects.create({ name: 'relevance', llmSettings: { provider: 'local', model: 'local' } });
    const retrieval = { method: 'hybrid', lowRelevance: 'never' };
    const patched = await h.call('PATCH', `/api/v1/projects/${project.id}`, { key: h.adminKey, json: { retrieval } });
    expect(patched.status).toBe(200);
    const [row] = await h.db.dataSource.query('SELECT retrieval_settings FROM projects WHERE id = $1', [project.id]);
    expect(row.retrieval_settings).toEqual(retrieval);
  });

  it('refuses an unknown policy with a typed 400 and stores nothing', async () => {
    const project = await h.projects.create({
      name: 'relevance-bad',
      llmSettings: { provider: 'local', model: 'local' },
    });
    const res = await h.call('PATCH', `/api/v1/projects/${project.id}`, {
      key: h.adminKey,
      json: { retrieval: { lowRelevance: 'sometimes' } },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'the request is invalid',
      code: 'invalid_request',
      details: 'retrieval.lowRelevance: lowRelevance must be one of the following values: spare-room, never',
    });
    const [row] = await h.db.dataSource.query('SELECT retrieval_settings FROM projects WHERE id = $1', [project.id]);
    expect(row.retrieval_settings).toBeNull();
  });
});
