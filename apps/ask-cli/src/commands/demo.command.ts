import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { AskClient } from '@ask/ask-client';
import { loadConfig } from '@ask/config';
import { ApiKeysRepository, ensureDatabase, runMigrations } from '@ask/persistence';
import { startStack } from '@ask/stack';
import { withDatabase } from './db';
import { ingestFolder } from './ingest.command';
import { toSettings } from './project.command';
import { readQuestions, runSession } from './session.command';

const ROOT = resolve(__dirname, '..', '..', '..', '..');
/** The PostgreSQL 15 manual, when the shared data folder sits beside the repo. */
export const POSTGRES_MANUAL = resolve(ROOT, '..', 'shared', 'data', 'kb-postgresql-15-docs');
/**
 * The fallback corpus that exists on any machine after `npm ci`: the Markdown documentation shipped
 * inside these installed packages.
 */
export const FALLBACK_PACKAGES = ['bullmq', 'typeorm', 'ioredis', 'pg', 'pgvector', 'js-tiktoken', '@nestjs/core', '@nestjs/bullmq', 'class-validator', 'commander'];

/**
 * Items retrieved per ask in the demo: with the local stand-in's 8,192-token window, twelve chunks of
 * context leave room for about eight earlier turns, so the 14-turn session shows trimming.
 */
const DEMO_TOP_K = 12;

/** Where the demo's documents come from: `--docs`, else the PostgreSQL manual, else the fallback corpus. */
export function chooseCorpus(docs?: string): { name: string; dirs: string[]; questions: string } {
  const questionsDir = join(ROOT, 'apps', 'ask-cli', 'questions');
  if (docs) return { name: `documents in ${docs}`, dirs: [resolve(docs)], questions: join(questionsDir, 'postgresql-session.txt') };
  if (existsSync(POSTGRES_MANUAL)) {
    return { name: 'PostgreSQL 15 manual', dirs: [POSTGRES_MANUAL], questions: join(questionsDir, 'postgresql-session.txt') };
  }
  const dirs = FALLBACK_PACKAGES.map((p) => join(ROOT, 'node_modules', p)).filter(
    (dir) => existsSync(dir) && readdirSync(dir).some((f) => f.toLowerCase().endsWith('.md')),
  );
  return { name: 'package documentation (fallback corpus)', dirs, questions: join(questionsDir, 'fallback-session.txt') };
}

/**
 * `ask demo`: migrates, creates (or reuses) a project with the embedded local providers, ingests the
 * corpus, starts the gateway and both workers as separate processes, and runs a multi-turn session
 * over HTTP + SSE, printing each streamed answer and each turn's budget.
 */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('run the main job end to end on real documents with the embedded local providers')
    .option('--docs <dir>', 'your own folder of Markdown, text or JSONL documents')
    .option('--questions <file>', 'one question per line (default: the corpus\'s session file)')
    .option('--keep-running', 'leave the stack running after the session (Ctrl-C to stop)')
    .action(async (flags: { docs?: string; questions?: string; keepRunning?: boolean }) => {
      const config = loadConfig();
      await ensureDatabase(config.DATABASE_URL);
      await runMigrations(config.DATABASE_URL);
      const corpus = chooseCorpus(flags.docs);
      console.log(`corpus: ${corpus.name}`);
      const projectName = `demo: ${corpus.name}`;
      const projectId = await withDatabase(async (ds, projects) => {
        const rows: Array<{ id: string }> = await ds.query('SELECT id FROM projects WHERE name = $1 ORDER BY created_at LIMIT 1', [projectName]);
        if (rows[0]) {
          await projects.updateSettings(rows[0].id, { topK: DEMO_TOP_K });
          return rows[0].id;
        }
        return (await projects.create({ ...toSettings({}, true), name: projectName, topK: DEMO_TOP_K })).id;
      });
      console.log(`project: ${projectId}`);
      const apiKey = await withDatabase((ds) => demoApiKey(new ApiKeysRepository(ds), projectId));
      console.log(`api key: ${apiKey} (shown once, stored hashed; earlier demo keys of this project are revoked)`);
      for (const dir of corpus.dirs) await ingestFolder(projectId, dir, { progress: true });

      console.log('starting api-gateway, retrieval-worker and synthesis-worker…');
      const stack = await startStack({ env: { LOG_LEVEL: 'warn' } });
      console.log(`gateway: ${stack.gatewayUrl}`);
      try {
        const outcomes = await runSession(new AskClient(stack.gatewayUrl, apiKey), projectId, readQuestions(flags.questions ?? corpus.questions));
        const failed = outcomes.filter((o) => o.error).length;
        console.log(`\n━━ ${outcomes.length} turns, ${outcomes.length - failed} answered, ${failed} failed`);
        console.log(`   turns dropped per turn: ${outcomes.map((o) => o.budget?.turnsDropped ?? '-').join(' ')}`);
        console.log(`   session: ${stack.gatewayUrl}/api/v1/projects/${projectId}/sessions/${outcomes[0]?.sessionId}`);
        if (flags.keepRunning) {
          console.log(`stack running; call it with -H 'Authorization: Bearer ${apiKey}'. Ctrl-C to stop`);
          await new Promise<void>((r) => process.once('SIGINT', () => r()));
        }
        if (failed) process.exitCode = 1;
      } finally {
        await stack.stop();
      }
    });
}

/**
 * A fresh API key of the demo project, named `demo`. A key is stored only as a hash, so an earlier
 * run's key cannot be shown again: it is revoked and a new one created (printed once by the caller).
 */
async function demoApiKey(keys: ApiKeysRepository, projectId: string): Promise<string> {
  for (const key of await keys.list(projectId)) {
    if (key.name === 'demo' && key.revokedAt === null) await keys.revoke(projectId, key.id);
  }
  return (await keys.create(projectId, 'demo')).key;
}
