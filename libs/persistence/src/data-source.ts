import type { AppConfig } from '@ask/config';
import { Client, type ClientConfig } from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';

/** Connection settings the persistence layer needs from the app config. */
export type PersistenceConfig = Pick<AppConfig, 'DATABASE_URL'>;

/** Tuning of the pg pool; defaults suit one app process. */
export interface DataSourceTuning {
  /** Largest number of pooled connections (pg `max`); default 10. */
  poolSize?: number;
  /** Name reported in pg_stat_activity.application_name; default `ask`. */
  applicationName?: string;
  /**
   * How long a query waits for a pooled connection before it fails with pg-pool's "timeout exceeded
   * when trying to connect", in milliseconds; 0 (default) waits without limit.
   */
  connectTimeoutMs?: number;
}

/**
 * TypeORM options for the service's database: every entity and migration, `synchronize: false`
 * (schema changes go through migrations only), migrations not run on connect.
 */
export function dataSourceOptions(config: PersistenceConfig, tuning: DataSourceTuning = {}): DataSourceOptions {
  return {
    type: 'postgres',
    url: config.DATABASE_URL,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    migrationsRun: false,
    // Failed queries are thrown to the caller; TypeORM's own logging would print their parameters.
    logging: false,
    applicationName: tuning.applicationName ?? 'ask',
    poolSize: tuning.poolSize ?? 10,
    ...(tuning.connectTimeoutMs ? { connectTimeoutMS: tuning.connectTimeoutMs } : {}),
    extra: { Client: PooledClient },
  };
}

/**
 * The pool's connection class: a pg Client that always has an `error` listener. The pool and TypeORM
 * attach and detach their own listeners as a connection moves between idle and checked out; a
 * server-side termination (PostgreSQL restarting: 57P01) that reaches a connection in between
 * would otherwise be an unhandled 'error' event and crash the process. The pool still hears the
 * error where it listens, and a broken connection is not queryable, so it is dropped on release.
 */
class PooledClient extends Client {
  constructor(config?: string | ClientConfig) {
    super(config);
    this.on('error', () => undefined);
  }
}

/**
 * A DataSource for `config.DATABASE_URL`, not yet initialised: call `initialize()` before use and
 * `destroy()` at shutdown.
 */
export function createDataSource(config: PersistenceConfig, tuning: DataSourceTuning = {}): DataSource {
  return new DataSource(dataSourceOptions(config, tuning));
}
