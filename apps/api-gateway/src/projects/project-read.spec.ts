import { LearnedWindowsRepository, UsageRepository } from '@ask/persistence';
import { type Harness, startGateway } from '../security/gateway-harness';

// The real gateway on a throwaway database: a project's read shows what planning learned for it.
describe('GET /api/v1/projects/:projectId (what planning learned)', () => {
  let h: Harness;

  beforeAll(async () => {
    // The suite is the operator: it allow-lists the loopback endpoint its project names.
    h = await startGateway({ ASK_PROVIDER_URL_ALLOWLIST: 'http://127.0.0.1:9' });
  }, 60_000);
  afterAll(() => h?.close());

  it('shows the disclosed window and the per-script calibration of an approximate model, and a PATCH of llm forgets the window', async () => {
    const model = `gw-read-${Date.now()}`;
    const project = await h.projects.create({
      name: 'learned',
      llmSettings: { provider: 'openai', model, baseUrl: 'http://127.0.0.1:9/v1', contextWindow: 64_000 },
    });
    const windows = new LearnedWindowsRepository(h.db.dataSource);
    const usage = new UsageRepository(h.db.dataSource);
    await windows.remember(project.id, 'openai', model, 16_000);
    for (let i = 0; i < 10; i += 1)
      await usage.record({
        model,
        counterId: 'approx:script-v1-floor',
        estimated: 1000,
        reported: 1250,
        script: 'latin',
        projectId: project.id,
      });
    // Another project on the same model id: its records are not this project's calibration.
    const other = await h.projects.create({ name: 'other tenant' });
    for (let i = 0; i < 10; i += 1)
      await usage.record({
        model,
        counterId: 'approx:script-v1-floor',
        estimated: 1000,
        reported: 1900,
        script: 'latin',
        projectId: other.id,
      });
    await usage.record({
      model,
      counterId: 'approx:script-v1-floor',
      estimated: 1000,
      reported: 2600,
      script: 'devanagari',
      source: 'overflow',
      projectId: project.id,
    });

    const read = await h.call('GET', `/api/v1/projects/${project.id}`, { key: h.adminKey });
    expect(read.status).toBe(200);
    expect(read.body?.['learned']).toEqual({
      windows: [{ provider: 'openai', model, window: 16_000, disclosedAt: expect.any(String) }],
      calibration: {
        model,
        base: 'approx:script-v1-floor',
        byScript: {
          latin: { factor: 1.25, samples: 10, evidence: 10 },
          devanagari: { factor: 2.6, samples: 1, evidence: 0 },
        },
      },
    });

    const patched = await h.call('PATCH', `/api/v1/projects/${project.id}`, {
      key: h.adminKey,
      json: { llm: { provider: 'openai', model, baseUrl: 'http://127.0.0.1:9/v1' } },
    });
    expect(patched.status).toBe(200);
    expect((patched.body?.['learned'] as { windows: unknown[] }).windows).toEqual([]);
  });

  it('shows no calibration for a model counted exactly', async () => {
    const project = await h.projects.create({ name: 'exact', llmSettings: { provider: 'local', model: 'local' } });
    const read = await h.call('GET', `/api/v1/projects/${project.id}`, { key: h.adminKey });
    expect(read.body?.['learned']).toEqual({ windows: [], calibration: null });
  });
});
