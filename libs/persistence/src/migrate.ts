/**
 * Migration runner: `node tools/run-ts.js libs/persistence/src/migrate.ts [--revert N]`
 * (or `npx nx run persistence:migrate`).
 *
 * Creates the database named in DATABASE_URL when missing, creates the `vector` extension, and runs
 * the pending migrations. `--revert N` undoes the last N instead. Exits non-zero on failure.
 */
import { loadConfig } from '@ask/config';
import { ensureDatabase, redactUrl, revertMigrations, runMigrations } from './database-admin';

async function main(argv: string[]): Promise<void> {
  const config = loadConfig();
  const revertAt = argv.indexOf('--revert');
  if (revertAt >= 0) {
    const steps = Number(argv[revertAt + 1] ?? '1');
    if (!Number.isInteger(steps) || steps < 1) throw new Error('--revert takes a positive integer');
    const reverted = await revertMigrations(config.DATABASE_URL, steps);
    console.log(`reverted ${reverted} migration(s) on ${redactUrl(config.DATABASE_URL)}`);
    return;
  }
  if (await ensureDatabase(config.DATABASE_URL)) console.log(`created database ${redactUrl(config.DATABASE_URL)}`);
  const applied = await runMigrations(config.DATABASE_URL);
  const names = applied.map((m) => m.name).join(', ') || 'none pending';
  console.log(`migrated ${redactUrl(config.DATABASE_URL)}: ${names}`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`migration failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
