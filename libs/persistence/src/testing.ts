/**
 * Test helpers for integration specs against the machine's real PostgreSQL. Not exported from
 * index.ts, so production code never pulls it in: other projects' specs and benches import it as
 * `@ask/persistence/testing` (tsconfig.base.json; jest.preset.js maps the aliases from it).
 */
import { randomBytes } from 'node:crypto';
import { loadConfig } from '@ask/config';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { createDataSource } from './data-source';
import { ensureDatabase, quoteIdent, runMigrations, splitDatabaseUrl } from './database-admin';

/** A throwaway, migrated database and an initialised DataSource on it. */
export interface TestDatabase {
  /** Connection URL of the new database. */
  url: string;
  dataSource: DataSource;
  /** Destroys the DataSource and drops the database (forcing out other sessions). Idempotent. */
  drop(): Promise<void>;
}

/**
 * Creates a uniquely named database (`ask_test_<pid>_<random>`) on the server of `serverUrl` (default
 * DATABASE_URL, the local server; a fault suite passes its own server), runs every migration, and
 * returns it with an initialised DataSource. Each spec file gets its own database, so suites never
 * collide and no existing database is touched.
 */
export async function createTestDatabase(serverUrl: string = loadConfig().DATABASE_URL): Promise<TestDatabase> {
  const base = new URL(serverUrl);
  const name = `ask_test_${process.pid}_${randomBytes(6).toString('hex')}`;
  base.pathname = `/${name}`;
  const url = base.toString();
  await ensureDatabase(url);
  let dropped = false;
  const dropDatabase = async () => {
    if (dropped) return;
    dropped = true;
    const { maintenanceUrl } = splitDatabaseUrl(url);
    const admin = new Client({ connectionString: maintenanceUrl });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
  };
  try {
    await runMigrations(url);
    const dataSource = createDataSource({ DATABASE_URL: url }, { poolSize: 4, applicationName: 'ask-test' });
    await dataSource.initialize();
    return {
      url,
      dataSource,
      drop: async () => {
        if (dataSource.isInitialized) await dataSource.destroy();
        await dropDatabase();
      },
    };
  } catch (error) {
    await dropDatabase();
    throw error;
  }
}
