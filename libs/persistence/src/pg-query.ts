import type { Pool } from 'pg';
import { type DataSource, QueryFailedError } from 'typeorm';

/**
 * One SQL statement on the DataSource's own pg pool, without TypeORM's query runner: the rows of the
 * result (node-postgres' type parsing, the same as `DataSource.query`), and a failure as TypeORM's
 * `QueryFailedError` around the driver's error (its `code`, like `23505`, in `driverError`), as
 * `DataSource.query` throws it.
 *
 * For the statements every ask runs (key check, project lookup, ask record, search): it skips the
 * query runner's per-call work (bench/pipeline reports the apps' CPU per ask). With `name`, the
 * statement is a named prepared statement: parsed once per pooled connection (node-postgres keeps
 * the names per connection and prepares again on a new one), then only bound and executed, which also saves PostgreSQL's parse on the same cores. A name must always
 * go with the same text; keep names for statements whose plan does not depend on the values (not the
 * vector searches, whose plans PostgreSQL chooses per call).
 *
 * Falls back to `DataSource.query` when the DataSource has no pg pool (not initialised: it throws
 * there as TypeORM would). Not for statements inside a transaction (use the transaction's manager).
 * @throws QueryFailedError when PostgreSQL refuses the statement.
 */
export async function pgQuery<R>(dataSource: DataSource, sql: string, params: unknown[], name?: string): Promise<R[]> {
  // TypeORM's postgres driver keeps its pg pool in `master` (not part of its typed API): when a
  // TypeORM upgrade moves it, this falls back to DataSource.query, slower but the same results.
  const pool = (dataSource.driver as unknown as { master?: Pool }).master;
  if (!pool || !dataSource.isInitialized) return dataSource.query(sql, params);
  try {
    const result = await pool.query(name ? { name, text: sql, values: params } : { text: sql, values: params });
    return result.rows as R[];
  } catch (err) {
    throw new QueryFailedError(sql, params, err as Error);
  }
}
