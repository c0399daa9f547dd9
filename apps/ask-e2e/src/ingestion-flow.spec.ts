import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { AskApiError, AskClient } from '@ask/ask-client';
import type { IngestionCounts, IngestionEvent, IngestionView } from '@ask/ask-contracts';
import { startFakeUpstream, type FakeUpstream } from '@ask/fake-upstream';
import { chunkDocument, loadDocuments, type SourceDocument } from '@ask/ingestion';
import { countLexicalTokens } from '@ask/llm-providers';
import { ApiKeysRepository, CredentialsCipher, ProjectsRepository } from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { startStack, type Stack } from '@ask/stack';
import { removeTestKeys } from '@ask/testing';

/** Three npm READMEs committed beside the suite (source and licence in the folder's SOURCE-AND-LICENCE). */
const KB = resolve(__dirname, 'fixtures', 'kb-npm');
const ROOT = resolve(__dirname, '..', '..', '..');
const LOCAL = { provider: 'local', model: 'local-lexical-v1', dimensions: 256 } as const;

/** Event types in order, with each run of `progress` folded into one. */
const shape = (events: IngestionEvent[]) =>
  events.map((e) => e.type).filter((t, i, all) => !(t === 'progress' && all[i - 1] === 'progress'));
const countsOf = (event: IngestionEvent | undefined) => (event?.data as { counts: IngestionCounts }).counts;

/** Runs the CLI (`node tools/run-ts.js apps/ask-cli/src/main.ts …`); resolves its exit code and output. */
function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [resolve(ROOT, 'tools', 'run-ts.js'), 'apps/ask-cli/src/main.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('exit', (code) => done({ code, stdout, stderr }));
  });
}

describe('ingestion as a queued job, end to end (four processes, real PostgreSQL and Redis)', () => {
  let db: TestDatabase;
  let stack: Stack;
  let fake: FakeUpstream;
  let projects: ProjectsRepository;
  let keys: ApiKeysRepository;
  let docs: SourceDocument[];
  let expectedChunks: number[];
  const project = async (name: string) => {
    const p = await projects.create({
      name,
      llmSettings: { provider: 'local', model: 'local' },
      embeddingSettings: { ...LOCAL },
      topK: 4,
    });
    return { id: p.id, client: new AskClient(stack.gatewayUrl, (await keys.create(p.id, 'e2e')).key) };
  };
  const chunkRows = (projectId: string) =>
    db.dataSource.query(
      `SELECT s.uri, count(*)::int AS chunks, min(c.embedding_model) AS model, min(c.embedding_dims) AS dims, max(c.embedding_model) AS max_model
         FROM knowledge_chunks c JOIN knowledge_sources s ON s.id = c.source_id WHERE c.project_id = $1 GROUP BY s.uri ORDER BY s.uri`,
      [projectId],
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(undefined));
    keys = new ApiKeysRepository(db.dataSource);
    docs = await loadDocuments(KB);
    expectedChunks = await Promise.all(
      docs.map(async (d) => (await chunkDocument(d.text, { chunkTokens: 400, overlapTokens: 60 })).length),
    );
    fake = await startFakeUpstream();
    stack = await startStack({
      env: {
        DATABASE_URL: db.url,
        ASK_KEY_PREFIX: `e2e-ingest-${randomUUID()}`,
        LOCAL_LLM_CHUNK_DELAY_MS: '0',
        LOG_LEVEL: 'warn',
        ASK_PROVIDER_URL_ALLOWLIST: fake.url,
      },
    });
  }, 180_000);

  afterAll(async () => {
    await stack?.stop();
    if (stack) await removeTestKeys(stack.env); // BullMQ meta, job hashes, event streams under its prefix
    await fake?.close();
    await db?.drop();
  });

  describe('POST knowledge → 202 → progress events → done', () => {
    let p: { id: string; client: AskClient };
    let accepted: { ingestionId: string; eventsUrl: string; statusUrl: string };
    let followed: Awaited<ReturnType<AskClient['followIngestion']>>;

    beforeAll(async () => {
      p = await project('ingest');
      accepted = await p.client.ingestKnowledge(
        p.id,
        docs.map((d) => ({ uri: d.uri, title: d.title, text: d.text })),
      );
      followed = await p.client.followIngestion(p.id, accepted.ingestionId);
    });

    it('answers 202 with the ingestion id and its routes', () => {
      expect(accepted).toEqual({
        ingestionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        statusUrl: `/api/v1/projects/${p.id}/ingestions/${accepted.ingestionId}`,
        eventsUrl: `/api/v1/projects/${p.id}/ingestions/${accepted.ingestionId}/events`,
      });
    });

    it('streams started, one progress per document in upload order, then done with the counts', () => {
      const total = expectedChunks.reduce((a, b) => a + b, 0);
      expect(followed.events.map((e) => e.type)).toEqual(['started', 'progress', 'progress', 'progress', 'done']);
      expect(followed.events[0].data).toEqual({
        ingestionId: accepted.ingestionId,
        kind: 'knowledge',
        attempt: 1,
        counts: { total: 3, done: 0, created: 0, replaced: 0, unchanged: 0, failed: 0, chunks: 0 },
      });
      expect(
        followed.events.slice(1, 4).map((e) => [(e.data as { uri: string }).uri, countsOf(e).done, countsOf(e).chunks]),
      ).toEqual([
        [docs[0].uri, 1, expectedChunks[0]],
        [docs[1].uri, 2, expectedChunks[0] + expectedChunks[1]],
        [docs[2].uri, 3, total],
      ]);
      expect(followed.done).toEqual({
        status: 'completed',
        counts: { total: 3, done: 3, created: 3, replaced: 0, unchanged: 0, failed: 0, chunks: total },
      });
      // Stream ids increase: the SSE ids a client resumes with.
      const ids = followed.events.map((e) => e.id);
      expect(
        [...ids].sort((a, b) =>
          BigInt(a.split('-')[0]) === BigInt(b.split('-')[0])
            ? Number(a.split('-')[1]) - Number(b.split('-')[1])
            : Number(BigInt(a.split('-')[0]) - BigInt(b.split('-')[0])),
        ),
      ).toEqual(ids);
    });

    it('stored exactly the chunks the chunker makes, each tagged with the embedding model', async () => {
      expect(await chunkRows(p.id)).toEqual(
        docs
          .map((d, i) => ({
            uri: d.uri,
            chunks: expectedChunks[i],
            model: 'local/local-lexical-v1',
            dims: 256,
            max_model: 'local/local-lexical-v1',
          }))
          .sort((a, b) => (a.uri < b.uri ? -1 : 1)),
      );
    });

    it("records the worker's embedding batches in provider_calls: the stored chunks' tokens, no ask", async () => {
      const calls: Array<Record<string, unknown>> = await db.dataSource.query(
        'SELECT operation, purpose, provider, ask_id, error_code, input_tokens FROM provider_calls WHERE project_id = $1',
        [p.id],
      );
      expect(calls.length).toBeGreaterThan(0);
      for (const call of calls)
        expect(call).toMatchObject({
          operation: 'embeddings',
          purpose: 'embed',
          provider: 'local',
          ask_id: null,
          error_code: null,
        });
      const chunks: Array<{ text: string }> = await db.dataSource.query(
        'SELECT text FROM knowledge_chunks WHERE project_id = $1',
        [p.id],
      );
      expect(calls.reduce((sum, c) => sum + Number(c['input_tokens']), 0)).toBe(
        chunks.reduce((sum, c) => sum + countLexicalTokens(c.text), 0),
      );
    });

    it('GET …/ingestions/:id reports the end, and the raw upload is gone', async () => {
      const view: IngestionView = await p.client.ingestion(p.id, accepted.ingestionId);
      expect(view).toEqual({
        ingestionId: accepted.ingestionId,
        projectId: p.id,
        kind: 'knowledge',
        status: 'completed',
        counts: followed.done!.counts,
        failures: [],
        embedding: { model: 'local/local-lexical-v1', dimensions: 256 },
        createdAt: expect.any(String),
        startedAt: expect.any(String),
        finishedAt: expect.any(String),
      });
      const [{ n }] = await db.dataSource.query(
        'SELECT count(*)::int AS n FROM ingestion_documents WHERE ingestion_id = $1',
        [accepted.ingestionId],
      );
      expect(n).toBe(0);
    });

    it('resuming after done (Last-Event-ID) ends at once; resuming after started replays the rest', async () => {
      const doneId = followed.events[4].id;
      const after: IngestionEvent[] = [];
      for await (const e of p.client.ingestionEvents(p.id, accepted.ingestionId, { lastEventId: doneId }))
        after.push(e);
      expect(after).toEqual([]);
      const rest: IngestionEvent[] = [];
      for await (const e of p.client.ingestionEvents(p.id, accepted.ingestionId, {
        lastEventId: followed.events[0].id,
      }))
        rest.push(e);
      expect(rest).toEqual(followed.events.slice(1));
    });

    it('re-ingesting: unchanged documents are skipped, a changed one has its chunks replaced', async () => {
      const changed = docs.map((d, i) => ({
        uri: d.uri,
        title: d.title,
        text: i === 1 ? `${d.text}\n\nEdited.` : d.text,
      }));
      const again = await p.client.ingestKnowledge(p.id, changed);
      const result = await p.client.followIngestion(p.id, again.ingestionId);
      const edited = (await chunkDocument(changed[1].text, { chunkTokens: 400, overlapTokens: 60 })).length;
      expect(result.done?.counts).toEqual({
        total: 3,
        done: 3,
        created: 0,
        replaced: 1,
        unchanged: 2,
        failed: 0,
        chunks: edited,
      });
      expect((await chunkRows(p.id)).find((r: { uri: string }) => r.uri === docs[1].uri).chunks).toBe(edited);
    });

    it('an ask then retrieves the ingested knowledge', async () => {
      const outcome = await p.client.askAndWait(p.id, 'How do I add a job to a BullMQ queue?');
      expect(outcome.error).toBeUndefined();
      expect(outcome.events.find((e) => e.type === 'retrieved')?.data).toMatchObject({ counts: { knowledge: 4 } });
    });
  });

  describe('the CLI through the gateway', () => {
    it('loads the folder with its progress bar fed by the ingestion stream, and the chunks land in the database', async () => {
      const p = await project('cli');
      const key = (await keys.create(p.id, 'cli')).key;
      const run = await runCli(
        ['ingest', '--project', p.id, '--docs', KB, '--gateway', stack.gatewayUrl, '--api-key', key, '--progress'],
        { DATABASE_URL: db.url, LOG_LEVEL: 'warn' },
      );
      const total = expectedChunks.reduce((a, b) => a + b, 0);
      expect([run.code, run.stderr.includes(`3/3 documents | ${total} chunks | 0 failed`)]).toEqual([0, true]);
      expect(run.stdout).toContain(
        `(1 ingestion): 3 documents (3 new, 0 replaced, 0 unchanged, 0 failed), ${total} chunks`,
      );
      const [{ n }] = await db.dataSource.query(
        'SELECT count(*)::int AS n FROM knowledge_chunks WHERE project_id = $1',
        [p.id],
      );
      expect(n).toBe(total);
      const rows = await db.dataSource.query('SELECT kind, status FROM ingestions WHERE project_id = $1', [p.id]);
      expect(rows).toEqual([{ kind: 'knowledge', status: 'completed' }]);
    });
  });

  describe.each([
    [
      'the same dimension (local 256 → openai text-embedding-3-small 256)',
      () => ({ provider: 'openai', model: 'text-embedding-3-small', dimensions: 256, baseUrl: `${fake.url}/v1` }),
      'openai/text-embedding-3-small',
      256,
    ],
    [
      'another dimension (local 256 → local 512)',
      () => ({ provider: 'local', model: 'local-lexical-v1', dimensions: 512 }),
      'local/local-lexical-v1',
      512,
    ],
  ])('an embedding model switch at %s', (_label, settings, model, dims) => {
    let p: { id: string; client: AskClient };
    const details = `stored=local/local-lexical-v1:256 current=${model}:${dims}; re-embed the project (POST /api/v1/projects/:projectId/reembed)`;
    const refusal = {
      error: "this project's knowledge was embedded with another embedding model",
      code: 'embedding_space_changed',
      details,
    };

    beforeAll(async () => {
      p = await project(`switch ${model} ${dims}`);
      const first = await p.client.ingestKnowledge(
        p.id,
        docs.map((d) => ({ uri: d.uri, title: d.title, text: d.text })),
      );
      expect((await p.client.followIngestion(p.id, first.ingestionId)).done?.status).toBe('completed');
      await projects.updateSettings(p.id, { embeddingSettings: settings() as never });
    });

    it('answers ask and upload with 409 embedding_space_changed naming both spaces, and queues nothing', async () => {
      const refused = async (call: Promise<unknown>) =>
        call.then(
          () => undefined,
          (err: AskApiError) => [err.status, err.body],
        );
      expect(await refused(p.client.ask(p.id, 'How do I add a job to a queue?'))).toEqual([409, refusal]);
      expect(await refused(p.client.ingestKnowledge(p.id, [{ uri: 'new.md', text: 'A new document.' }]))).toEqual([
        409,
        refusal,
      ]);
      const rows = await db.dataSource.query(
        'SELECT kind, status FROM ingestions WHERE project_id = $1 ORDER BY created_at',
        [p.id],
      );
      expect(rows).toEqual([{ kind: 'knowledge', status: 'completed' }]);
    });

    it('re-embeds from the stored text as a queued job: started, a progress per source, done; every row moves to the new space', async () => {
      const before = await chunkRows(p.id);
      const accepted = await p.client.reembed(p.id);
      const followed = await p.client.followIngestion(p.id, accepted.ingestionId);
      expect(shape(followed.events)).toEqual(['started', 'progress', 'done']);
      expect(followed.events.filter((e) => e.type === 'progress').map((e) => (e.data as { uri?: string }).uri)).toEqual(
        [...docs.map((d) => d.uri)].sort(),
      );
      const total = expectedChunks.reduce((a, b) => a + b, 0);
      expect(followed.done).toEqual({
        status: 'completed',
        counts: { total: 3, done: 3, created: 3, replaced: 0, unchanged: 0, failed: 0, chunks: total },
      });
      expect(await chunkRows(p.id)).toEqual(
        before.map((r: { uri: string; chunks: number }) => ({
          uri: r.uri,
          chunks: r.chunks,
          model,
          dims,
          max_model: model,
        })),
      );
      const sources = await db.dataSource.query(
        'SELECT DISTINCT embedding_model, embedding_dims FROM knowledge_sources WHERE project_id = $1',
        [p.id],
      );
      expect(sources).toEqual([{ embedding_model: model, embedding_dims: dims }]);
    });

    it('then asks retrieve with the new model, and uploads of the new model work', async () => {
      const outcome = await p.client.askAndWait(p.id, 'How do I add a job to a BullMQ queue?');
      expect([outcome.error, outcome.done !== undefined]).toEqual([undefined, true]);
      expect(outcome.events.find((e) => e.type === 'retrieved')?.data).toMatchObject({ counts: { knowledge: 4 } });
      const upload = await p.client.ingestKnowledge(p.id, [{ uri: 'new.md', text: 'A new document about queues.' }]);
      const result = await p.client.followIngestion(p.id, upload.ingestionId);
      expect(result.done?.counts).toEqual({
        total: 1,
        done: 1,
        created: 1,
        replaced: 0,
        unchanged: 0,
        failed: 0,
        chunks: 1,
      });
      const [row] = await db.dataSource.query(
        `SELECT c.embedding_model, c.embedding_dims FROM knowledge_chunks c JOIN knowledge_sources s ON s.id = c.source_id WHERE s.project_id = $1 AND s.uri = 'new.md'`,
        [p.id],
      );
      expect(row).toEqual({ embedding_model: model, embedding_dims: dims });
    });
  });
});
