import { randomBytes } from 'node:crypto';
import { loadConfig } from '@ask/config';
import { Client } from 'pg';
import { ensureDatabase, quoteIdent, redactUrl, splitDatabaseUrl } from './database-admin';
import { createTestDatabase } from './testing';

async function databaseExists(name: string): Promise<boolean> {
  const admin = new Client({ connectionString: splitDatabaseUrl(loadConfig().DATABASE_URL).maintenanceUrl });
  await admin.connect();
  try {
    return ((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount ?? 0) > 0;
  } finally {
    await admin.end();
  }
}

describe('database-admin', () => {
  describe(splitDatabaseUrl.name, () => {
    it('returns the database name and the maintenance URL of the same server', () => {
      expect(splitDatabaseUrl('postgres://u:p@db.example:6543/ask?sslmode=require')).toEqual({
        database: 'ask',
        maintenanceUrl: 'postgres://u:p@db.example:6543/postgres?sslmode=require',
      });
    });

    it('throws when the URL names no database, without the password', () => {
      expect(() => splitDatabaseUrl('postgres://u:hunter2@h:5432/')).toThrow(
        'DATABASE_URL names no database: postgres://u:***@h:5432/',
      );
    });
  });

  describe(redactUrl.name, () => {
    it('hides the password', () => {
      expect(redactUrl('postgres://u:hunter2@h/db')).toBe('postgres://u:***@h/db');
      expect(redactUrl('nonsense')).toBe('<unparseable url>');
    });
  });

  describe(quoteIdent.name, () => {
    it('doubles embedded quotes', () => {
      expect(quoteIdent('a"b')).toBe('"a""b"');
    });
  });

  describe(ensureDatabase.name, () => {
    it('creates a missing database once, then reports it exists', async () => {
      const name = `ask_test_${process.pid}_${randomBytes(6).toString('hex')}_ensure`;
      const url = new URL(loadConfig().DATABASE_URL);
      url.pathname = `/${name}`;
      try {
        expect(await ensureDatabase(url.toString())).toBe(true);
        expect(await ensureDatabase(url.toString())).toBe(false);
        expect(await databaseExists(name)).toBe(true);
      } finally {
        const admin = new Client({ connectionString: splitDatabaseUrl(url.toString()).maintenanceUrl });
        await admin.connect();
        await admin.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)}`);
        await admin.end();
      }
    });
  });

  describe(createTestDatabase.name, () => {
    it('creates a uniquely named database and drops it', async () => {
      const db = await createTestDatabase();
      const name = new URL(db.url).pathname.slice(1);
      expect(name).toMatch(/^ask_test_\d+_[0-9a-f]{12}$/);
      expect(await databaseExists(name)).toBe(true);
      await db.drop();
      await db.drop();
      expect(await databaseExists(name)).toBe(false);
    });
  });
});
