import { AskErrorCode } from '@ask/ask-errors';
import { createEmbeddingProvider } from '../create-embedding-provider';
import { classifyUpstreamError } from '../errors/classify-upstream-error';
import { EmbeddingShapeError } from '../errors/upstream-errors';
import { toAskError } from '../errors/to-ask-error';
import { PLANTED_KEY, thrown } from '../testing/chat-contract';
import { allowing } from '../testing/egress';
import { type FakeUpstream, startFakeUpstream } from '../testing/fake-upstream';
import type { EmbeddingProvider, EmbeddingSettings, EmbeddingUsage, ProviderCredentials } from '../types';

interface EmbeddingCase {
  name: string;
  settings: (fake: FakeUpstream) => EmbeddingSettings;
  credentials: ProviderCredentials;
  route: string;
  /** A dimensions value the model cannot return (the fake answers its own length). */
  wrongDimensions?: number;
}

const [openAi, gateway, azure, titan, vertex, ollama] = [
  {
    name: 'OpenAI text-embedding-3-small (dimensions sent)',
    settings: (f) => ({ provider: 'openai', model: 'text-embedding-3-small', dimensions: 512, baseUrl: `${f.url}/v1` }),
    credentials: { apiKey: 'sk-test-embed-000000000000' },
    route: 'openai.embeddings',
  },
  {
    name: 'OpenAI-compatible gateway (custom base_url, ada-002 has a fixed 1536)',
    settings: (f) => ({
      provider: 'openai',
      model: 'text-embedding-ada-002',
      dimensions: 1536,
      baseUrl: `${f.url}/v1`,
    }),
    credentials: {},
    route: 'openai.embeddings',
    wrongDimensions: 1024,
  },
  {
    name: 'Azure OpenAI deployment',
    settings: (f) => ({
      provider: 'azure-foundry',
      model: 'text-embedding-3-large',
      dimensions: 1024,
      baseUrl: f.url,
      apiVersion: '2024-10-21',
    }),
    credentials: { apiKey: 'azure-embed-key-000000' },
    route: 'azure.deployments.embeddings',
  },
  {
    name: 'Bedrock Titan v2',
    settings: (f) => ({
      provider: 'bedrock',
      model: 'amazon.titan-embed-text-v2:0',
      dimensions: 256,
      region: 'us-east-1',
      baseUrl: f.url,
    }),
    credentials: {
      awsAccessKeyId: 'AKIAFAKEFAKEFAKEFAKE',
      awsSecretAccessKey: 'fakeSecretKey0000000000000000000000000000',
    },
    route: 'bedrock.invoke',
  },
  {
    name: 'Vertex text-embedding-005',
    settings: (f) => ({
      provider: 'vertex',
      model: 'text-embedding-005',
      dimensions: 768,
      gcpProject: 'demo',
      region: 'europe-west4',
      baseUrl: f.url,
    }),
    credentials: { gcpAccessToken: 'ya29.fake-token' },
    route: 'vertex.predict',
  },
  {
    name: 'Ollama nomic-embed-text',
    settings: (f) => ({ provider: 'ollama', model: 'nomic-embed-text', dimensions: 768, baseUrl: f.url }),
    credentials: {},
    route: 'ollama.embed',
    wrongDimensions: 1024,
  },
] satisfies EmbeddingCase[];
const cases: EmbeddingCase[] = [openAi, gateway, azure, titan, vertex, ollama];

describe('embedding adapters against the fake upstream', () => {
  let fake: FakeUpstream;
  beforeEach(async () => {
    fake = await startFakeUpstream();
  });
  afterEach(async () => {
    await fake.close();
  });

  describe.each(cases)('$name', (c) => {
    const make = (): EmbeddingProvider => createEmbeddingProvider(c.settings(fake), c.credentials, allowing(fake));

    it('returns one vector of the configured dimensions per text, in order', async () => {
      const provider = make();
      const vectors = await provider.embed(['alpha', 'beta', 'gamma']);
      expect(vectors.map((v) => v.length)).toEqual([provider.dimensions, provider.dimensions, provider.dimensions]);
      expect(vectors[0]).not.toEqual(vectors[1]);
      expect(await provider.embed(['beta'])).toEqual([vectors[1]]);
      expect(fake.requests.every((r) => r.route === c.route)).toBe(true);
    });

    it("reports the call's usage as the wire sent it (issue 17 item 1)", async () => {
      let usage: EmbeddingUsage | undefined;
      await make().embed(['alpha', 'beta gamma'], undefined, (u) => (usage = u));
      const raw = usage?.raw as Record<string, unknown>;
      const reported: Record<string, () => unknown> = {
        'openai.embeddings': () => raw['prompt_tokens'],
        'azure.deployments.embeddings': () => raw['prompt_tokens'],
        'ollama.embed': () => raw['prompt_eval_count'],
        'bedrock.invoke': () => (raw['inputTextTokenCount'] as number[]).reduce((a, b) => a + b, 0),
        'vertex.predict': () => (raw['token_count'] as number[]).reduce((a, b) => a + b, 0),
      };
      expect(usage?.inputTokens).toBeGreaterThan(0);
      expect(usage?.inputTokens).toBe(reported[c.route]());
      // The raw object holds counts, never the vectors.
      expect(JSON.stringify(raw)).not.toMatch(/embedding|values/);
      if (c.route.startsWith('openai') || c.route.startsWith('azure')) {
        expect(usage?.convention).toBe('openai');
        expect(raw['total_tokens']).toBe(raw['prompt_tokens']);
      }
      if (c.route === 'ollama.embed') expect([usage?.convention, usage?.model]).toEqual(['ollama', 'nomic-embed-text']);
    });

    it('maps a 500 to a retryable failure and a content-filter 400 to a sanitised 502', async () => {
      fake.setFault('500');
      expect(classifyUpstreamError(await thrown(() => make().embed(['x'])), 'openai')).toMatchObject({
        kind: 'retryable',
        status: 500,
      });
      fake.setFault({ kind: 'content-filter', message: `blocked; key ${PLANTED_KEY}` });
      const failure = classifyUpstreamError(await thrown(() => make().embed(['x'])), 'openai');
      const ask = toAskError(failure);
      expect(ask).toMatchObject({ status: 502, code: AskErrorCode.LlmUpstream });
      expect(JSON.stringify(ask.toBody())).not.toContain('PLANTED');
    });

    const wrong = c.wrongDimensions;
    if (wrong !== undefined) {
      it('refuses vectors of another length than the settings say', async () => {
        const provider = createEmbeddingProvider(
          { ...c.settings(fake), dimensions: wrong },
          c.credentials,
          allowing(fake),
        );
        const err = await thrown(() => provider.embed(['alpha']));
        expect(err).toBeInstanceOf(EmbeddingShapeError);
        expect(classifyUpstreamError(err, 'ollama')).toMatchObject({ kind: 'fatal', status: 502 });
      });
    }
  });

  it('sends Titan v2 its dimensions and normalize, one text per InvokeModel call', async () => {
    const provider = createEmbeddingProvider(titan.settings(fake), titan.credentials, allowing(fake));
    await provider.embed(['one', 'two']);
    expect(fake.requests.map((r) => r.body)).toEqual(
      expect.arrayContaining([
        { inputText: 'one', dimensions: 256, normalize: true },
        { inputText: 'two', dimensions: 256, normalize: true },
      ]),
    );
    expect(fake.requests.every((r) => r.auth === 'aws-sigv4')).toBe(true);
  });

  it('sends Ollama truncate: false and Vertex outputDimensionality with autoTruncate: false', async () => {
    await createEmbeddingProvider(ollama.settings(fake), {}, allowing(fake)).embed(['x']);
    await createEmbeddingProvider(vertex.settings(fake), vertex.credentials, allowing(fake)).embed(['y']);
    expect(fake.requests[0]?.body).toEqual({ model: 'nomic-embed-text', input: ['x'], truncate: false });
    expect(fake.requests[1]?.body).toEqual({
      instances: [{ content: 'y' }],
      parameters: { outputDimensionality: 768, autoTruncate: false },
    });
    expect(fake.requests[1]?.path).toBe(
      '/v1/projects/demo/locations/europe-west4/publishers/google/models/text-embedding-005:predict',
    );
  });
});
