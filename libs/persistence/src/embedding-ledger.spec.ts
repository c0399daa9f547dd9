import { randomUUID } from 'node:crypto';
import { startFakeUpstream, type FakeUpstream } from '@ask/fake-upstream';
import {
  createEmbeddingProvider,
  EgressPolicy,
  type EmbeddingSettings,
  type EmbeddingUsage,
  type ProviderCredentials,
} from '@ask/llm-providers';
import { CredentialsCipher } from './credentials-cipher';
import { ProjectsRepository } from './repositories/projects.repository';
import { ProviderCallsRepository } from './repositories/provider-calls.repository';
import { createTestDatabase, type TestDatabase } from './testing';
import { EmbeddingLedger, embeddingUsageColumns } from './embedding-ledger';

const QUESTION = 'How do I create an HNSW index?';
const silent = { error: () => undefined };

describe(embeddingUsageColumns.name, () => {
  // Real embedding usage shapes, as each provider's wire reports them.
  it.each<[string, EmbeddingUsage, number]>([
    [
      'OpenAI /v1/embeddings usage (prompt_tokens, total_tokens)',
      { inputTokens: 8, raw: { prompt_tokens: 8, total_tokens: 8 }, convention: 'openai' },
      8,
    ],
    [
      'Ollama /api/embed (prompt_eval_count beside its durations)',
      {
        inputTokens: 6,
        raw: { model: 'nomic-embed-text', total_duration: 14143917, load_duration: 1019500, prompt_eval_count: 6 },
        convention: 'ollama',
      },
      6,
    ],
    ['the embedded embedder (its own count)', { inputTokens: 7, raw: { promptTokens: 7 }, convention: 'local' }, 7],
    [
      'Bedrock Titan (one inputTextTokenCount per text, summed)',
      { inputTokens: 11, raw: { inputTextTokenCount: [4, 7] } },
      11,
    ],
    ['Vertex :predict (statistics.token_count per prediction)', { inputTokens: 9, raw: { token_count: [9] } }, 9],
  ])('%s', (_name, reported, input) => {
    expect(embeddingUsageColumns(reported, 'p', silent)).toEqual({
      usage: { input, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 },
      usageError: null,
    });
  });

  it('refuses an OpenAI total that is not the prompt, logging the raw object, never clamping', () => {
    const errors: string[] = [];
    const raw = { prompt_tokens: 8, total_tokens: 9 };
    expect(
      embeddingUsageColumns({ inputTokens: 8, raw, convention: 'openai' }, 'openai', {
        error: (m: string) => void errors.push(m),
      }),
    ).toEqual({
      usage: null,
      usageError: 'openai usage is inconsistent: total_tokens 9 is not prompt_tokens + completion_tokens (8)',
    });
    expect(errors).toEqual([
      'openai embedding usage refused: total_tokens 9 is not prompt_tokens + completion_tokens (8); raw usage {"prompt_tokens":8,"total_tokens":9}',
    ]);
  });

  it('has no usage for a call that reported none (a per-text figure missing)', () => {
    expect(embeddingUsageColumns({ inputTokens: null, raw: { token_count: [3, null] } }, 'vertex', silent)).toEqual({
      usage: null,
      usageError: null,
    });
    expect(embeddingUsageColumns(undefined, 'vertex', silent)).toEqual({ usage: null, usageError: null });
  });
});

// Integration: the real adapters against the fake upstream, rows in a throwaway PostgreSQL database.
describe('provider_calls rows written by EmbeddingLedger', () => {
  jest.setTimeout(60_000);
  let db: TestDatabase;
  let fake: FakeUpstream;
  let calls: ProviderCallsRepository;
  let ledger: EmbeddingLedger;
  let projectId: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    fake = await startFakeUpstream();
    calls = new ProviderCallsRepository(db.dataSource);
    ledger = new EmbeddingLedger(calls);
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    projectId = (await projects.create({ name: 'ledger' })).id;
  });

  afterAll(async () => {
    await fake?.close();
    await db?.drop();
  });

  const egress = () => ({
    egress: new EgressPolicy({ allowList: [{ origin: new URL(fake.url).origin, pathPrefix: '' }] }),
  });
  const rowsOf = async (askId: string) =>
    (await calls.forAsk(askId)).map((r) => ({
      operation: r.operation,
      purpose: r.purpose,
      provider: r.provider,
      requestedModel: r.requestedModel,
      answeringModel: r.answeringModel,
      rawUsage: r.rawUsage,
      inputTokens: r.inputTokens,
      outputTokens: r.outputTokens,
      errorCode: r.errorCode,
      costUsd: r.costUsd,
      priceFamily: r.priceFamily,
      sessionId: r.sessionId,
    }));

  interface Case {
    name: string;
    settings: () => EmbeddingSettings;
    credentials: ProviderCredentials;
    texts: string[];
    /** The row's usage columns: the raw object as the provider sent it, input tokens, cost and price. */
    row: (raw: never) => Record<string, unknown>;
  }

  const cases: Case[] = [
    {
      name: 'OpenAI text-embedding-3-small: prompt_tokens, costed at 0.02 USD/MTok',
      settings: () => ({
        provider: 'openai',
        model: 'text-embedding-3-small',
        dimensions: 256,
        baseUrl: `${fake.url}/v1`,
      }),
      credentials: { apiKey: 'sk-ledger-test-0000000000' },
      texts: [QUESTION],
      row: () => ({
        provider: 'openai',
        requestedModel: 'text-embedding-3-small',
        answeringModel: 'text-embedding-3-small',
        // The fake upstream's figure, from the model's tokenizer.
        rawUsage: { prompt_tokens: 10, total_tokens: 10 },
        inputTokens: 10,
        // 10 tokens × 0.02 USD per million = 0.0000002 USD.
        costUsd: '0.000000200000',
        priceFamily: 'text-embedding-3-small',
      }),
    },
    {
      name: 'Ollama nomic-embed-text: prompt_eval_count, self-hosted (0)',
      settings: () => ({ provider: 'ollama', model: 'nomic-embed-text', dimensions: 768, baseUrl: fake.url }),
      credentials: {},
      texts: [QUESTION, 'ef_search'],
      row: () => ({
        provider: 'ollama',
        requestedModel: 'nomic-embed-text',
        answeringModel: 'nomic-embed-text',
        rawUsage: {
          model: 'nomic-embed-text',
          total_duration: 14143917,
          load_duration: 1019500,
          prompt_eval_count: 12,
        },
        inputTokens: 12,
        costUsd: '0.000000000000',
        priceFamily: 'self-hosted',
      }),
    },
    {
      name: 'Bedrock Titan v2: inputTextTokenCount per text, no price in the table',
      settings: () => ({
        provider: 'bedrock',
        model: 'amazon.titan-embed-text-v2:0',
        dimensions: 256,
        region: 'us-east-1',
        baseUrl: fake.url,
      }),
      credentials: {
        awsAccessKeyId: 'AKIAFAKEFAKEFAKEFAKE',
        awsSecretAccessKey: 'fakeSecretKey0000000000000000000000000000',
      },
      texts: [QUESTION, 'ef_search'],
      row: () => ({
        provider: 'bedrock',
        requestedModel: 'amazon.titan-embed-text-v2:0',
        answeringModel: null,
        rawUsage: { inputTextTokenCount: [10, 2] },
        inputTokens: 12,
        costUsd: null,
        priceFamily: null,
      }),
    },
    {
      name: 'the embedded lexical embedder: its own count (7 words), self-hosted (0)',
      settings: () => ({ provider: 'local', model: 'local-lexical-v1', dimensions: 256 }),
      credentials: {},
      texts: [QUESTION],
      row: () => ({
        provider: 'local',
        requestedModel: 'local-lexical-v1',
        answeringModel: 'local-lexical-v1',
        rawUsage: { promptTokens: 7 },
        inputTokens: 7,
        costUsd: '0.000000000000',
        priceFamily: 'self-hosted',
      }),
    },
  ];

  it.each(cases)('$name', async (c) => {
    const askId = randomUUID();
    const sessionId = randomUUID();
    const provider = createEmbeddingProvider(c.settings(), c.credentials, egress());
    const vectors = await ledger.embed(provider, c.texts, { projectId, sessionId, askId });
    expect(vectors).toHaveLength(c.texts.length);
    expect(await rowsOf(askId)).toEqual([
      {
        operation: 'embeddings',
        purpose: 'embed',
        outputTokens: 0,
        errorCode: null,
        sessionId,
        ...c.row(undefined as never),
      },
    ]);
  });

  it('records a failed call with its typed code and no usage, and rethrows the error', async () => {
    const askId = randomUUID();
    const provider = createEmbeddingProvider(cases[0].settings(), cases[0].credentials, egress());
    fake.setFault('500');
    await expect(ledger.embed(provider, [QUESTION], { projectId, askId })).rejects.toThrow();
    expect(await rowsOf(askId)).toEqual([
      {
        operation: 'embeddings',
        purpose: 'embed',
        provider: 'openai',
        requestedModel: 'text-embedding-3-small',
        answeringModel: null,
        rawUsage: null,
        inputTokens: null,
        outputTokens: null,
        errorCode: 'embedding_upstream',
        costUsd: null,
        priceFamily: null,
        sessionId: null,
      },
    ]);
  });

  it('queues the write in `writes` when the caller awaits it later', async () => {
    const askId = randomUUID();
    const writes: Array<Promise<void>> = [];
    await ledger.embed(createEmbeddingProvider(cases[3].settings(), {}), [QUESTION], { projectId, askId }, { writes });
    expect(writes).toHaveLength(1);
    await Promise.all(writes);
    expect((await rowsOf(askId)).map((r) => r.inputTokens)).toEqual([7]);
  });
});
