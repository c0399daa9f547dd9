import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { AskClient, type AskOutcome } from '@ask/ask-client';
import { IngestionService, loadDocuments } from '@ask/ingestion';
import { LocalEmbeddingProvider } from '@ask/llm-providers';
import {
  ApiKeysRepository,
  CredentialsCipher,
  InsightsRepository,
  KnowledgeRepository,
  ProjectsRepository,
  ProviderCallsRepository,
} from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { freePort, startStack, type Stack } from '@ask/stack';
import { removeTestKeys } from '@ask/testing';

/** The small real knowledge base committed in fixtures/data (source, licence: its README). */
const KB = resolve(__dirname, '..', '..', '..', 'fixtures', 'data', 'kb-pgvector');
const QUESTION = 'Which distance operators does an HNSW index accept in pgvector?';

/** One span as the OTLP/HTTP JSON encoding carries it (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Array<{ key: string; value: Record<string, unknown> }>;
}

/** A collected span with the service that exported it and its attributes as plain values. */
interface Collected {
  service: string;
  span: OtlpSpan;
  attributes: Record<string, unknown>;
}

/** An OTLP value (`{ stringValue }`, `{ intValue }` as a string or number, `{ arrayValue }`…) as a plain value. */
function plain(value: Record<string, unknown>): unknown {
  if ('stringValue' in value) return value['stringValue'];
  if ('intValue' in value) return Number(value['intValue']);
  if ('doubleValue' in value) return value['doubleValue'];
  if ('boolValue' in value) return value['boolValue'];
  if ('arrayValue' in value)
    return ((value['arrayValue'] as { values?: Array<Record<string, unknown>> }).values ?? []).map(plain);
  return value;
}

/**
 * A loopback OTLP/HTTP receiver (`POST /v1/traces`, JSON, gzip or not): it keeps every span with the
 * `service.name` of its resource, and every raw body (to search for text that must not be there).
 */
async function startCollector(): Promise<{ url: string; spans: Collected[]; bodies: string[]; server: Server }> {
  const spans: Collected[] = [];
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
      bodies.push(text);
      const body = JSON.parse(text) as {
        resourceSpans?: Array<{
          resource?: { attributes?: OtlpSpan['attributes'] };
          scopeSpans?: Array<{ spans?: OtlpSpan[] }>;
        }>;
      };
      for (const rs of body.resourceSpans ?? []) {
        const service = String(
          plain(rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value ?? { stringValue: '' }),
        );
        for (const ss of rs.scopeSpans ?? [])
          for (const span of ss.spans ?? [])
            spans.push({
              service,
              span,
              attributes: Object.fromEntries((span.attributes ?? []).map((a) => [a.key, plain(a.value)])),
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${port}`, spans, bodies, server };
}

describe('the span tree of one ask across the three processes (OTLP/HTTP to a loopback collector)', () => {
  let db: TestDatabase;
  let stack: Stack;
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let outcome: AskOutcome;
  let apiKey: string;
  let ours: Collected[];

  beforeAll(async () => {
    collector = await startCollector();
    db = await createTestDatabase();
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    const project = await projects.create({
      name: 'tracing',
      llmSettings: { provider: 'local', model: 'local' },
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
      topK: 4,
      retrievalSettings: { method: 'vector' },
    });
    const ingestion = new IngestionService(
      new KnowledgeRepository(db.dataSource),
      new InsightsRepository(db.dataSource),
    );
    await ingestion.ingest(project.id, await loadDocuments(KB), new LocalEmbeddingProvider());
    stack = await startStack({
      env: {
        DATABASE_URL: db.url,
        ASK_KEY_PREFIX: `e2e-${randomUUID()}`,
        LOCAL_LLM_CHUNK_DELAY_MS: '0',
        LOG_LEVEL: 'warn',
        ASK_TRACING: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_BSP_SCHEDULE_DELAY: '100',
      },
    });
    apiKey = (await new ApiKeysRepository(db.dataSource).create(project.id, 'e2e')).key;
    outcome = await new AskClient(stack.gatewayUrl, apiKey).askAndWait(project.id, QUESTION);
    // Each process exports its spans within the batch delay of their end; a process's outermost span
    // ends last, so once the three have arrived, every span of the ask has.
    const deadline = Date.now() + 30_000;
    const outermost = ['ask accept', 'ask-retrieval process', 'ask-synthesis process'];
    const ended = () => outermost.every((name) => collector.spans.some((s) => s.span.name === name));
    while (!ended() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const root = collector.spans.find((s) => s.span.name === 'ask accept' && s.attributes['ask.id'] === outcome.askId);
    ours = collector.spans.filter((s) => s.span.traceId === root?.span.traceId);
  });

  afterAll(async () => {
    await stack?.stop();
    if (stack) await removeTestKeys(stack.env); // BullMQ meta, job hashes, event streams under its prefix
    await db?.drop();
    await new Promise((r) => collector?.server.close(r));
  });

  it('answers the ask', () => {
    expect(outcome.events.at(-1)?.type).toBe('done');
  });

  it('links gateway → retrieval → synthesis spans in one trace, parent by parent', () => {
    const byId = new Map(ours.map((s) => [s.span.spanId, s]));
    const edges = ours.map(({ service, span }) => {
      const parent = span.parentSpanId ? byId.get(span.parentSpanId) : undefined;
      return `${service}: ${span.name} <- ${parent ? `${parent.service}: ${parent.span.name}` : '(root)'}`;
    });
    expect(edges.sort()).toEqual(
      [
        'api-gateway: ask accept <- (root)',
        'api-gateway: ask.publish accepted <- api-gateway: ask accept',
        'api-gateway: ask-retrieval send <- api-gateway: ask accept',
        'retrieval-worker: ask-retrieval process <- api-gateway: ask-retrieval send',
        'retrieval-worker: embeddings local-lexical-v1 <- retrieval-worker: ask-retrieval process',
        'retrieval-worker: retrieval.search <- retrieval-worker: ask-retrieval process',
        'retrieval-worker: ask.publish retrieved <- retrieval-worker: ask-retrieval process',
        'retrieval-worker: ask-synthesis send <- retrieval-worker: ask-retrieval process',
        'synthesis-worker: ask-synthesis process <- retrieval-worker: ask-synthesis send',
        'synthesis-worker: ask.plan <- synthesis-worker: ask-synthesis process',
        'synthesis-worker: ask.publish budget <- synthesis-worker: ask-synthesis process',
        'synthesis-worker: chat local <- synthesis-worker: ask-synthesis process',
        'synthesis-worker: ask.store <- synthesis-worker: ask-synthesis process',
        'synthesis-worker: ask.publish done <- synthesis-worker: ask-synthesis process',
      ].sort(),
    );
    // Kinds (OTLP enum): 2 server, 3 client, 4 producer, 5 consumer.
    const kind = (name: string) => ours.find((s) => s.span.name === name)?.span.kind;
    expect(['ask accept', 'ask-retrieval send', 'ask-retrieval process', 'chat local'].map(kind)).toEqual([2, 4, 5, 3]);
  });

  it('puts the GenAI attributes on the provider spans, equal to the ledger rows', async () => {
    const rows = await new ProviderCallsRepository(db.dataSource).forAsk(outcome.askId);
    const embed = rows.find((r) => r.operation === 'embeddings');
    const answer = rows.find((r) => r.purpose === 'answer');
    expect(rows.map((r) => r.purpose).sort()).toEqual(['answer', 'embed']);
    const chat = ours.find((s) => s.span.name === 'chat local')?.attributes;
    expect(chat).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'local',
      'gen_ai.system': 'local',
      'gen_ai.request.model': 'local',
      'gen_ai.response.model': answer?.answeringModel,
      'gen_ai.response.finish_reasons': [answer?.finishReason],
      'gen_ai.usage.input_tokens': answer?.inputTokens,
      'gen_ai.usage.output_tokens': answer?.outputTokens,
      'gen_ai.usage.cache_read.input_tokens': 0,
      'gen_ai.usage.cache_creation.input_tokens': 0,
      'gen_ai.usage.reasoning.output_tokens': 0,
      'ask.call.purpose': 'answer',
      'ask.planned_tokens': answer?.plannedTokens,
    });
    expect(answer?.inputTokens).toBeGreaterThan(0);
    expect(ours.find((s) => s.span.name === 'embeddings local-lexical-v1')?.attributes).toEqual({
      'gen_ai.operation.name': 'embeddings',
      'gen_ai.provider.name': 'local',
      'gen_ai.system': 'local',
      'gen_ai.request.model': 'local-lexical-v1',
      'gen_ai.response.model': 'local-lexical-v1',
      'gen_ai.embeddings.dimension.count': 256,
      'gen_ai.usage.input_tokens': embed?.inputTokens,
      'ask.embedding.inputs': 1,
    });
    // The question's words by the lexical rule: which, distance, operators, does, an, hnsw, index, accept, in, pgvector.
    expect(embed?.inputTokens).toBe(10);
  });

  it('carries the ids and figures of the ask, never its question or a key', () => {
    const accept = ours.find((s) => s.span.name === 'ask accept')?.attributes;
    expect(accept).toEqual({
      'ask.project.id': expect.any(String),
      'ask.id': outcome.askId,
      'ask.session.id': outcome.sessionId,
    });
    const everything = collector.bodies.join('\n');
    for (const secret of [QUESTION, 'HNSW index accept', apiKey, outcome.answer.slice(0, 40)])
      expect(everything).not.toContain(secret);
  });
});
