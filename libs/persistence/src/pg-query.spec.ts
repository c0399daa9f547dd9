import { QueryFailedError } from 'typeorm';
import { pgQuery } from './pg-query';
import { createTestDatabase, type TestDatabase } from './testing';

describe('pgQuery', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  it('returns the rows DataSource.query returns, named or not, typed by node-postgres', async () => {
    const sql = `SELECT $1::int AS n, '{"a":[1]}'::jsonb AS j, '2026-01-02T03:04:05Z'::timestamptz AS t`;
    const viaTypeorm = await db.dataSource.query(sql, [7]);
    expect(await pgQuery(db.dataSource, sql, [7])).toEqual(viaTypeorm);
    // Twice under the same name: prepared once on the connection, then executed again.
    expect(await pgQuery(db.dataSource, sql, [7], 'pg_query_spec')).toEqual(viaTypeorm);
    expect(await pgQuery(db.dataSource, sql, [8], 'pg_query_spec')).toEqual([{ ...viaTypeorm[0], n: 8 }]);
    expect(viaTypeorm).toEqual([{ n: 7, j: { a: [1] }, t: new Date('2026-01-02T03:04:05Z') }]);
  });

  it('throws QueryFailedError with the driver error code, as DataSource.query does', async () => {
    const failure = await pgQuery(db.dataSource, 'INSERT INTO projects (id, name) VALUES ($1, NULL)', [
      '00000000-0000-4000-8000-000000000001',
    ]).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(QueryFailedError);
    expect((failure as QueryFailedError & { driverError: { code: string } }).driverError.code).toBe('23502');
  });
});
