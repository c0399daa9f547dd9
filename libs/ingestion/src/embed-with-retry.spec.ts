import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isAskError } from '@ask/ask-errors';
import { createEmbeddingProvider, type EmbeddingProvider } from '@ask/llm-providers';
import { allowing } from '@ask/llm-providers/testing';
import { CredentialsCipher, InsightsRepository, KnowledgeRepository, ProjectsRepository } from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { EmbeddingCallError, embedWithRetry } from './embed-with-retry';
import { IngestionService } from './ingestion.service';

/**
 * A loopback OpenAI embeddings endpoint whose answer each test scripts: the real `openai` SDK of
 * the production adapter (createEmbeddingProvider) talks to it, so the SDK's own errors are what gets
 * classified. `answers` is consumed one per request; when empty, every text gets a vector.
 */
type Answer = { status: number; body: unknown; headers?: Record<string, string> } | 'vectors';

describe(embedWithRetry.name, () => {
  let server: Server;
  let url: string;
  let answers: Answer[] = [];
  let requests: Array<{ input: string[] }> = [];
  /** Texts containing this word get a 400, as a provider refusing one input would answer. */
  const POISON = 'POISON';
  /** The vector length the endpoint answers with (what a wrong-length model returns). */
  let answerDimensions: number | undefined;

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
      req.on('end', () => {
        const body = JSON.parse(raw) as { input: string[]; dimensions?: number; encoding_format?: string };
        requests.push({ input: body.input });
        const answer = answers.shift() ?? 'vectors';
        const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
          res.writeHead(status, { 'content-type': 'application/json', ...headers });
          res.end(JSON.stringify(payload));
        };
        if (answer !== 'vectors') return send(answer.status, answer.body, answer.headers);
        if (body.input.some((t) => t.includes(POISON))) {
          return send(400, {
            error: {
              message: 'Invalid input: the text could not be embedded.',
              type: 'invalid_request_error',
              param: 'input',
              code: null,
            },
          });
        }
        const dims = answerDimensions ?? body.dimensions ?? 1536;
        send(200, {
          object: 'list',
          model: 'm',
          data: body.input.map((t, index) => {
            const vector = Array.from({ length: dims }, (_, i) => (i === t.length % dims ? 1 : 0));
            // The openai SDK asks for base64 (little-endian float32) unless told otherwise.
            const embedding =
              body.encoding_format === 'base64'
                ? Buffer.from(new Float32Array(vector).buffer).toString('base64')
                : vector;
            return { object: 'embedding', index, embedding };
          }),
          usage: { prompt_tokens: 1, total_tokens: 1 },
        });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => {
    answers = [];
    requests = [];
    answerDimensions = undefined;
  });

  const provider = (model = 'text-embedding-3-small', dimensions = 8): EmbeddingProvider =>
    createEmbeddingProvider(
      { provider: 'openai', model, dimensions, baseUrl: url },
      { apiKey: 'sk-test-not-a-real-key' },
      allowing(url),
    );
  const failureOf = async (call: Promise<unknown>) => {
    const err = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(err instanceof EmbeddingCallError)) throw new Error(`expected EmbeddingCallError, got ${String(err)}`);
    return { event: err.failure.error.toEvent(), scope: err.failure.scope };
  };

  it('maps an upstream 401 to 502 embedding_auth_failed, once (no retry), without the key', async () => {
    answers = [
      {
        status: 401,
        body: {
          error: {
            message: 'Incorrect API key provided: sk-test-not-a-real-key.',
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        },
      },
    ];
    const { event, scope } = await failureOf(embedWithRetry(provider(), ['a'], { providerRetries: 3 }));
    expect(event).toEqual({
      status: 502,
      code: 'embedding_auth_failed',
      error: "the embedding provider rejected this project's credentials",
      details: expect.stringMatching(/^provider=openai status=401 /),
    });
    expect(JSON.stringify(event)).not.toContain('sk-test-not-a-real-key');
    expect([scope, requests.length]).toEqual(['run', 1]);
  });

  it('maps a 429 whose retries are spent to 429 rate_limited with the Retry-After it sent', async () => {
    answers = [
      {
        status: 429,
        body: { error: { message: 'Rate limit reached for requests', type: 'requests', code: 'rate_limit_exceeded' } },
        headers: { 'retry-after': '7' },
      },
    ];
    const { event, scope } = await failureOf(embedWithRetry(provider(), ['a'], { providerRetries: 0 }));
    expect(event).toEqual({ status: 429, code: 'rate_limited', error: 'too many requests', details: 'retry_after=7' });
    expect([scope, requests.length]).toEqual(['run', 1]);
  });

  it('retries a 429 after its Retry-After (capped by maxRetryWaitMs) and returns the vectors', async () => {
    answers = [
      {
        status: 429,
        body: { error: { message: 'Rate limit reached', code: 'rate_limit_exceeded' } },
        headers: { 'retry-after': '7' },
      },
    ];
    const vectors = await embedWithRetry(provider(), ['a', 'bb'], { providerRetries: 1, maxRetryWaitMs: 10 });
    expect([vectors.length, vectors[0].length, requests.length]).toEqual([2, 8, 2]);
  });

  it('maps a vector of the wrong length to 502 embedding_dimensions_mismatch naming both lengths', async () => {
    answerDimensions = 1536;
    const { event, scope } = await failureOf(embedWithRetry(provider('text-embedding-ada-002', 256), ['a', 'b']));
    expect(event).toEqual({
      status: 502,
      code: 'embedding_dimensions_mismatch',
      error: "the embedding provider returned vectors of another length than the project's settings",
      details: 'provider=openai expected_dimensions=256 received_dimensions=1536 expected_vectors=2 received_vectors=2',
    });
    expect(scope).toBe('run');
  });

  it('maps a 400 for the input to 502 embedding_upstream scoped to the document', async () => {
    const { event, scope } = await failureOf(embedWithRetry(provider(), [`a ${POISON}`]));
    expect([event.status, event.code, scope]).toEqual([502, 'embedding_upstream', 'document']);
    expect(event.details).toMatch(/^provider=openai status=400 /);
  });

  describe('through IngestionService.ingest', () => {
    let db: TestDatabase;
    let service: IngestionService;
    let projects: ProjectsRepository;
    const docs = [
      { uri: 'a.md', title: 'A', text: 'Alpha document about queues.' },
      { uri: 'b.md', title: 'B', text: `Beta document with ${POISON} in it.` },
      { uri: 'c.md', title: 'C', text: 'Gamma document about streams.' },
    ];
    const stored = async (projectId: string) =>
      db.dataSource.query(
        'SELECT s.uri, s.chunk_count FROM knowledge_sources s WHERE s.project_id = $1 ORDER BY s.uri',
        [projectId],
      );

    beforeAll(async () => {
      db = await createTestDatabase();
      service = new IngestionService(new KnowledgeRepository(db.dataSource), new InsightsRepository(db.dataSource));
      projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    });
    afterAll(() => db.drop());

    it('fails only the refused document (the shared batch is retried per document) and stores the others', async () => {
      const projectId = (await projects.create({ name: 'poison' })).id;
      const failed: Array<[string, string]> = [];
      const result = await service.ingest(projectId, docs, provider(), {
        onDocumentFailed: (uri, error) => void failed.push([uri, error.code]),
      });
      expect(result).toEqual({ sources: 3, created: 2, replaced: 0, skippedUnchanged: 0, chunks: 2, failed: 1 });
      expect(failed).toEqual([['b.md', 'embedding_upstream']]);
      // One call for the batch of three chunks, then one per document.
      expect(requests.map((r) => r.input.length)).toEqual([3, 1, 1, 1]);
      expect(await stored(projectId)).toEqual([
        { uri: 'a.md', chunk_count: 1 },
        { uri: 'c.md', chunk_count: 1 },
      ]);
    }, 60_000);

    it('stops the run with the typed error on a 401, storing nothing', async () => {
      const projectId = (await projects.create({ name: 'auth' })).id;
      answers = [{ status: 401, body: { error: { message: 'Incorrect API key provided.', code: 'invalid_api_key' } } }];
      const err = await service
        .ingest(
          projectId,
          docs.filter((d) => d.uri !== 'b.md'),
          provider(),
        )
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(isAskError(err) ? [err.status, err.code] : err).toEqual([502, 'embedding_auth_failed']);
      expect(await stored(projectId)).toEqual([]);
    });
  });
});
