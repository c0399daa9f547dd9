import { Client } from 'pg';
import type { Migration } from 'typeorm';
import { createDataSource } from './data-source';

/** Key of the advisory lock that serialises concurrent migration runs on one database. */
const MIGRATION_LOCK_KEY = 0x61736b; // "ask"

/**
 * Splits a PostgreSQL URL into the database name and a URL of the same server's maintenance
 * database (`postgres`), used to create or drop it.
 * @throws Error when the URL names no database.
 */
export function splitDatabaseUrl(url: string): { database: string; maintenanceUrl: string } {
  const parsed = new URL(url);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!database) throw new Error(`DATABASE_URL names no database: ${redactUrl(url)}`);
  parsed.pathname = '/postgres';
  return { database, maintenanceUrl: parsed.toString() };
}

/** The URL with any password replaced by `***`, safe for logs and errors. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<unparseable url>';
  }
}

/** Double-quotes an SQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Creates the database named in `url` when it does not exist, connecting to the server's `postgres`
 * database. Tolerates a concurrent creator.
 * @returns whether this call created it.
 */
export async function ensureDatabase(url: string): Promise<boolean> {
  const { database, maintenanceUrl } = splitDatabaseUrl(url);
  const admin = new Client({ connectionString: maintenanceUrl });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount) return false;
    try {
      await admin.query(`CREATE DATABASE ${quoteIdent(database)}`);
      return true;
    } catch (error) {
      // 42P04 duplicate_database: another process created it in the meantime.
      if ((error as { code?: string }).code === '42P04') return false;
      throw error;
    }
  } finally {
    await admin.end();
  }
}

/**
 * Runs the pending migrations on the database at `url` (which must exist), after
 * `CREATE EXTENSION IF NOT EXISTS vector`, holding an advisory lock so concurrent runners (several
 * apps starting at once) apply each migration once.
 * @returns the migrations applied by this call, oldest first.
 */
export async function runMigrations(url: string): Promise<Migration[]> {
  const dataSource = createDataSource({ DATABASE_URL: url }, { poolSize: 1, applicationName: 'ask-migrate' });
  await dataSource.initialize();
  try {
    await dataSource.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
    try {
      await dataSource.query('CREATE EXTENSION IF NOT EXISTS vector');
      return await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      await dataSource.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
    }
  } finally {
    await dataSource.destroy();
  }
}

/**
 * Reverts the last `steps` applied migrations on the database at `url`, newest first.
 * @returns the number reverted.
 */
export async function revertMigrations(url: string, steps = 1): Promise<number> {
  const dataSource = createDataSource({ DATABASE_URL: url }, { poolSize: 1, applicationName: 'ask-migrate' });
  await dataSource.initialize();
  try {
    let reverted = 0;
    for (; reverted < steps; reverted++) {
      const applied = await dataSource.query('SELECT count(*)::int AS n FROM migrations').catch(() => [{ n: 0 }]);
      if (applied[0].n === 0) break;
      await dataSource.undoLastMigration({ transaction: 'each' });
    }
    return reverted;
  } finally {
    await dataSource.destroy();
  }
}
