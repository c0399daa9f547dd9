import { type Harness, localProject, startGateway } from './gateway-harness';

/**
 * A provider `region` names a location, never a host: Vertex splices it into
 * `https://{region}-aiplatform.googleapis.com` and Bedrock into `bedrock-runtime.{region}.amazonaws.com`,
 * so a project key that stored `attacker.example/x?` sent the project's bearer (or the service's own
 * ADC token) to `attacker.example`, past the `baseUrl` allow-list. Save time refuses it (400 naming
 * the field, nothing stored), for either key and either settings block.
 */
describe('provider region on PATCH (real gateway, PostgreSQL and Redis)', () => {
  let h: Harness;
  let project: { id: string; key: string };

  beforeAll(async () => {
    h = await startGateway();
    project = await localProject(h, 'region');
  }, 60_000);
  afterAll(() => h?.close());

  const llm = (region: string) => ({ llm: { provider: 'vertex', model: 'gemini-2.5-flash', gcpProject: 'p', region } });
  const embedding = (region: string) => ({
    embedding: { provider: 'vertex', model: 'text-embedding-005', dimensions: 768, gcpProject: 'p', region },
  });
  const bedrock = (region: string) => ({
    llm: { provider: 'bedrock', model: 'anthropic.claude-sonnet-4-5-20250929-v1:0', region },
  });
  const reason = 'must be a location id like us-central1 or us-east-1 (letters, digits and inner hyphens)';

  it.each(['attacker.example/x?', 'attacker.example#', 'x@attacker.example/', 'a.b', 'us-central1.', '', '-x'])(
    'refuses region %j with 400 naming the field, for each block and key, and stores nothing',
    async (region) => {
      const before = await h.projects.findById(project.id);
      const got: string[] = [];
      for (const [field, body] of [
        ['llm.region', llm(region)],
        ['embedding.region', embedding(region)],
        ['llm.region', bedrock(region)],
      ] as const) {
        for (const key of [project.key, h.adminKey]) {
          const reply = await h.call('PATCH', `/api/v1/projects/${project.id}`, { key, json: body });
          got.push(`${reply.status} ${reply.body?.code} ${reply.body?.details}`);
        }
        expect(got.at(-1)).toBe(`400 invalid_request ${field}: ${field.split('.')[1]} ${reason}`);
      }
      expect(new Set(got).size).toBe(2);
      expect(await h.projects.findById(project.id)).toEqual(before);
    },
  );

  it('stores a location id (europe-west4) for Vertex and Bedrock (us-east-1)', async () => {
    const vertex = await h.call('PATCH', `/api/v1/projects/${project.id}`, {
      key: project.key,
      json: { ...llm('europe-west4'), credentials: { gcpAccessToken: 'ya29.region-spec' } },
    });
    expect([vertex.status, (vertex.body?.['llmSettings'] as { region?: string })?.region]).toEqual([
      200,
      'europe-west4',
    ]);
    const aws = await h.call('PATCH', `/api/v1/projects/${project.id}`, {
      key: project.key,
      json: {
        ...bedrock('us-east-1'),
        credentials: {
          awsAccessKeyId: 'AKIAFAKEFAKEFAKEFAKE',
          awsSecretAccessKey: 'fakeSecretKey0000000000000000000000000000',
        },
      },
    });
    expect([aws.status, (aws.body?.['llmSettings'] as { region?: string })?.region]).toEqual([200, 'us-east-1']);
  });
});
