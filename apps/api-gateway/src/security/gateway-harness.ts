/**
 * The real gateway in-process for the security suites: a throwaway migrated database
 * (`createTestDatabase`), the machine's Redis under a unique ASK_KEY_PREFIX, an admin key, an
 * encryption key, and the log output captured (stdout and stderr, also the JSON logger's direct
 * writes to fd 1) so a suite can search it.
 * Nothing of ours is mocked. Not a spec: imported by the specs beside it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { NestExpressApplication } from '@nestjs/platform-express';
import Redis from 'ioredis';
import { ApiKeysRepository, CredentialsCipher, ProjectsRepository, SessionsRepository } from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { readReply, type Reply } from '@ask/testing';

export type { Reply };

/** Options of {@link Harness.call}. */
export interface CallOptions {
  /** Sent as `Authorization: Bearer <key>`. */
  key?: string;
  /** A JSON body (serialised here). */
  json?: unknown;
  /** A raw body, sent as is with `content-type: application/json` unless headers say otherwise. */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export interface Harness {
  baseUrl: string;
  adminKey: string;
  db: TestDatabase;
  app: NestExpressApplication;
  projects: ProjectsRepository;
  sessions: SessionsRepository;
  keys: ApiKeysRepository;
  redis: Redis;
  prefix: string;
  /** Everything the process wrote to stdout and stderr since the harness started. */
  logs(): string;
  call(method: string, path: string, options?: CallOptions): Promise<Reply>;
  close(): Promise<void>;
}

/** Starts the gateway with `env` added (e.g. rate limits) on a free loopback port. */
export async function startGateway(env: Record<string, string> = {}): Promise<Harness> {
  const captured: string[] = [];
  const stdoutWrite = process.stdout.write.bind(process.stdout);
  const stderrWrite = process.stderr.write.bind(process.stderr);
  const capture =
    (write: typeof process.stdout.write) =>
    (chunk: unknown, ...rest: unknown[]): boolean => {
      captured.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
    };
  process.stdout.write = capture(stdoutWrite) as typeof process.stdout.write;
  process.stderr.write = capture(stderrWrite) as typeof process.stderr.write;
  // The JSON logger (pino's synchronous destination) writes to fd 1 with fs.writeSync, past process.stdout.
  const writeSync = fs.writeSync;
  fs.writeSync = ((fd: number, data: unknown, ...rest: unknown[]) => {
    if (fd === 1 || fd === 2)
      captured.push(typeof data === 'string' ? data : Buffer.from(data as Uint8Array).toString('utf8'));
    return (writeSync as (...args: unknown[]) => number)(fd, data, ...rest);
  }) as typeof fs.writeSync;

  const db = await createTestDatabase();
  const adminKey = `admin-${randomBytes(24).toString('base64url')}`;
  const prefix = `sec-${randomUUID()}`;
  const encryptionKey = randomBytes(32).toString('base64');
  Object.assign(process.env, {
    DATABASE_URL: db.url,
    ASK_KEY_PREFIX: prefix,
    ASK_ADMIN_KEY: adminKey,
    ASK_ENCRYPTION_KEY: encryptionKey,
    LOG_LEVEL: 'verbose',
    ...env,
  });
  // The config is read when the app module is imported, so import it only now.
  const { createGateway } = await import('../gateway.factory');
  const app = await createGateway();
  await app.listen(0, '127.0.0.1');
  const port = (app.getHttpServer().address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}`;
  const redis = new Redis(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379/0');

  const call = async (method: string, path: string, options: CallOptions = {}): Promise<Reply> => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (options.key !== undefined) headers['authorization'] = `Bearer ${options.key}`;
    let body: string | Buffer | undefined;
    if (options.json !== undefined) body = JSON.stringify(options.json);
    if (options.raw !== undefined) body = options.raw;
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
      headers['content-type'] = 'application/json';
    const controller = new AbortController();
    const payload = typeof body === 'string' || body === undefined ? body : new Uint8Array(body);
    const response = await fetch(`${baseUrl}${path}`, { method, headers, body: payload, signal: controller.signal });
    return readReply(response, controller);
  };

  return {
    baseUrl,
    adminKey,
    db,
    app,
    projects: new ProjectsRepository(db.dataSource, new CredentialsCipher(encryptionKey)),
    sessions: new SessionsRepository(db.dataSource),
    keys: new ApiKeysRepository(db.dataSource),
    redis,
    prefix,
    logs: () => captured.join(''),
    call,
    close: async () => {
      await app.close();
      const stale = await redis.keys(`${prefix}:*`);
      const braced = await redis.keys(`{${prefix}:*`);
      if (stale.length + braced.length) await redis.del(...stale, ...braced);
      redis.disconnect();
      await db.drop();
      process.stdout.write = stdoutWrite;
      process.stderr.write = stderrWrite;
      fs.writeSync = writeSync;
    },
  };
}

/** A project with the embedded local providers (asks and ingestion work without network). */
export async function localProject(
  harness: Harness,
  name: string,
): Promise<{ id: string; key: string; keyId: string }> {
  const project = await harness.projects.create({
    name,
    llmSettings: { provider: 'local', model: 'local' },
    embeddingSettings: { provider: 'local', model: 'local-lexical-v1', dimensions: 256 },
  });
  const key = await harness.keys.create(project.id, 'suite');
  return { id: project.id, key: key.key, keyId: key.id };
}

/** Row counts of every table plus an md5 of each table's rows: equal before and after means nothing changed. */
export async function tableChecksum(harness: Harness): Promise<Record<string, string>> {
  const tables: Array<{ tablename: string }> = await harness.db.dataSource.query(
    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
  );
  const result: Record<string, string> = {};
  for (const { tablename } of tables) {
    const [row] = await harness.db.dataSource.query(
      `SELECT count(*)::text AS n, coalesce(md5(string_agg(t::text, '|' ORDER BY t::text)), '') AS sum FROM "${tablename}" t`,
    );
    result[tablename] = `${row.n}:${row.sum}`;
  }
  return result;
}
