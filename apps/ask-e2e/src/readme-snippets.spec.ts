import { spawnSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { AskClient } from '@ask/ask-client';
import { ApiKeysRepository, CredentialsCipher, ProjectsRepository } from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { startStack, type Stack } from '@ask/stack';
import { removeTestKeys } from '@ask/testing';

const ROOT = resolve(__dirname, '..', '..', '..');
const README = readFileSync(resolve(ROOT, 'README.md'), 'utf8');

/**
 * The README's `sh` commands that this spec does not run, each with why. Every other command of
 * every `sh` block runs, in README order, in one shell, against a throwaway database and a stack of
 * the four apps on a free port.
 */
const NOT_RUN: ReadonlyArray<[RegExp, string]> = [
  [/^npm ci && npm run demo/, 'the whole demo; CI runs it'],
  [/^npm ci && npm test/, 'the whole test suite, this spec included'],
  [/^npm run demo -- --keep-running/, 'runs until Ctrl-C; the spec starts the same stack with tools/stack'],
  [/^npm run setup/, 'starts and configures the shared PostgreSQL and Redis; npm test runs it before every suite'],
  [
    /^ASK_EVENTS_SECRET=.* node tools\/run-ts\.js apps\/api-gateway\/src\/main\.ts/,
    'a server on :3000; the spec starts it on a free port',
  ],
  [
    /^node tools\/run-ts\.js apps\/(retrieval|synthesis|ingestion)-worker\/src\/main\.ts/,
    'a long-running worker; the spec starts it with tools/stack',
  ],
  [/^export ASK_GATEWAY=http:\/\/127\.0\.0\.1:3000$/, "the spec's gateway is on a free port; ASK_GATEWAY is set to it"],
];

/** Every command of the README's ```sh blocks (continuation lines joined), in order. */
function readmeCommands(markdown: string): string[] {
  const commands: string[] = [];
  for (const block of markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    const joined = block[1].replace(/\\\n\s*/g, '');
    for (const line of joined.split('\n')) if (line.trim() && !line.trim().startsWith('#')) commands.push(line.trim());
  }
  return commands;
}

describe('README commands, run as pasted (real PostgreSQL, Redis and the four apps)', () => {
  let db: TestDatabase;
  let stack: Stack;
  const encryptionKey = randomBytes(32).toString('base64');
  const env = () => ({
    DATABASE_URL: db.url,
    ASK_KEY_PREFIX: `readme-${randomUUID()}`,
    ASK_ENCRYPTION_KEY: encryptionKey,
    LOCAL_LLM_CHUNK_DELAY_MS: '0',
    LOG_LEVEL: 'warn',
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await startStack({ env: env() });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    if (stack) await removeTestKeys(stack.env); // BullMQ meta, job hashes, event streams under its prefix
    await db?.drop();
  });

  const commands = readmeCommands(README);
  const skipped = commands.filter((c) => NOT_RUN.some(([re]) => re.test(c)));
  const runnable = commands.filter((c) => !skipped.includes(c));

  it('leaves out only the commands listed in NOT_RUN, each of which is still in the README', () => {
    expect(NOT_RUN.filter(([re]) => !commands.some((c) => re.test(c))).map(([re]) => re.source)).toEqual([]);
    expect(runnable.length).toBeGreaterThanOrEqual(12);
  });

  it('runs every other command with exit code 0, and they do what the README says', () => {
    const script = [
      'set -euo pipefail',
      ...runnable.flatMap((c, i) => [`echo "::: ${i}" >&2`, c]),
      'echo "ASK_PROJECT=$ASK_PROJECT"',
      'echo "ASK_API_KEY=$ASK_API_KEY"',
    ].join('\n');
    const run = spawnSync('bash', ['-c', script], {
      cwd: ROOT,
      env: { ...process.env, ...stack.env, ASK_GATEWAY: stack.gatewayUrl },
      encoding: 'utf8',
      timeout: 400_000,
    });
    const failedAt = [...run.stderr.matchAll(/^::: (\d+)$/gm)].pop()?.[1];
    const context = `exit ${run.status}, last command: ${failedAt === undefined ? '-' : runnable[Number(failedAt)]}\n${run.stderr.slice(-3000)}`;
    expect([run.status, context]).toEqual([0, context]);
    // The last `export` of each variable wins: the hand-run project on the local providers.
    const project = /^ASK_PROJECT=(\S+)$/m.exec(run.stdout)?.[1];
    const key = /^ASK_API_KEY=(\S+)$/m.exec(run.stdout)?.[1];
    expect(project).toMatch(/^[0-9a-f-]{36}$/);
    expect(key).toMatch(/^ask_[A-Za-z0-9_-]{12}_[A-Za-z0-9_-]{43}$/);
    // The PATCH's answer and the GET after it: the switched project, credentials never returned.
    expect(run.stdout).toContain('"llmSettings":{"model":"gpt-4o","provider":"openai"},');
    expect(run.stdout).toContain('"hasCredentials":true,');
    expect(run.stdout).not.toContain('sk-...');
    // The session file's 4 questions answered in one session; the uncovered one abstained.
    expect(run.stdout).toContain('━━ 4 turns, 4 answered, 0 failed');
    expect(run.stdout).toContain('The knowledge base does not seem to cover this question');
    // `sessions` lists that one session of the hand-run project, with its 4 turns.
    expect(run.stdout).toMatch(/^[0-9a-f-]{36} {2}4 turns {2}\d{4}-\d\d-\d\d \d\d:\d\d {2}.+\n1 session$/m);
    // `ask eval` on the committed excerpt prints the table the README shows, line for line.
    const evalTable = /prints, with the lexical `local` embedder:\n\n```\n([^`]+)```/.exec(README)?.[1];
    expect(evalTable?.split('\n')[0]).toMatch(/^method +recall@1/);
    for (const line of evalTable?.trim().split('\n') ?? []) expect(run.stdout).toContain(line);
  }, 420_000);

  it('left the database as the README describes: two projects named mine, one switched to OpenAI with credentials sealed', async () => {
    const rows: Array<{
      llm: string;
      embedding: string;
      sealed: boolean;
      sources: number;
      insights: number;
      recommendations: number;
      keys: number;
      turns: number;
    }> = await db.dataSource.query(
      `SELECT p.llm_settings->>'provider' AS llm, p.embedding_settings->>'model' AS embedding, p.credentials_encrypted IS NOT NULL AS sealed,
                (SELECT count(*)::int FROM knowledge_sources s WHERE s.project_id = p.id) AS sources,
                (SELECT count(*)::int FROM insights i WHERE i.project_id = p.id) AS insights,
                (SELECT count(*)::int FROM recommendations r WHERE r.project_id = p.id) AS recommendations,
                (SELECT count(*)::int FROM api_keys k WHERE k.project_id = p.id) AS keys,
                (SELECT count(*)::int FROM ask_session_messages m JOIN ask_sessions ss ON ss.id = m.session_id WHERE ss.project_id = p.id) AS turns
           FROM projects p WHERE p.name = 'mine' ORDER BY p.created_at`,
    );
    expect(rows).toEqual([
      {
        llm: 'openai',
        embedding: 'text-embedding-3-small',
        sealed: true,
        sources: 0,
        insights: 0,
        recommendations: 0,
        keys: 1,
        turns: 0,
      },
      {
        llm: 'local',
        embedding: 'local-lexical-v1',
        sealed: false,
        sources: 4,
        insights: 1,
        recommendations: 1,
        keys: 1,
        turns: 4,
      },
    ]);
  });

  it('answers an ask of a project whose provider lacks its credential with 202, then a 412 error event naming the field', async () => {
    const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(encryptionKey));
    const project = await projects.create({
      name: 'no credential',
      llmSettings: { provider: 'openai', model: 'gpt-4o' },
      embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
    });
    const client = new AskClient(
      stack.gatewayUrl,
      (await new ApiKeysRepository(db.dataSource).create(project.id, 'readme')).key,
    );
    const outcome = await client.askAndWait(project.id, 'What is pgvector?');
    expect(outcome.events.map((e) => e.type)).toEqual(['accepted', 'retrieved', 'error']);
    expect(outcome.error).toMatchObject({
      status: 412,
      code: 'llm_not_configured',
      details: expect.stringContaining('apiKey'),
    });
  });
});
