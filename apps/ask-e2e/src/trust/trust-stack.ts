/**
 * What the trust suites (SSRF, secrets) share: a migrated throwaway database, the four apps as
 * processes on the machine's Redis under a unique ASK_KEY_PREFIX with a known admin key, events
 * secret and encryption key, an HTTP helper that reads SSE answers for a bounded time, every app's
 * log text, and a loopback canary server that counts the connections it receives.
 * Not a spec: imported by the specs beside it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join, resolve } from 'node:path';
import { AskClient } from '@ask/ask-client';
import { ApiKeysRepository, CredentialsCipher, ProjectsRepository, type ProjectSettingsInput } from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { startStack, type Stack } from '@ask/stack';
import { readReply, type Reply, removeTestKeys } from '@ask/testing';

/** A running trust suite: database, repositories, the four apps and their secrets. */
export interface TrustStack {
  db: TestDatabase;
  stack: Stack;
  projects: ProjectsRepository;
  keys: ApiKeysRepository;
  adminKey: string;
  eventsSecret: string;
  encryptionKey: string;
  /** `method path` on the gateway with `Authorization: Bearer <key>` and a JSON body; SSE read for `sseMs`. */
  call(method: string, path: string, options?: { key?: string; json?: unknown; sseMs?: number }): Promise<Reply>;
  /** A project written straight to the database (as the operator's seed would) and one API key for it. */
  project(
    name: string,
    settings: ProjectSettingsInput,
    credentials?: Record<string, string>,
  ): Promise<{ id: string; key: string; client: AskClient }>;
  /** The text of every log file the four apps wrote so far. */
  logs(): string;
  close(): Promise<void>;
}

/** Starts the four apps on a fresh database with `env` added (the allow-list, static hosts…). */
export async function startTrustStack(name: string, env: NodeJS.ProcessEnv): Promise<TrustStack> {
  const db = await createTestDatabase();
  const adminKey = `admin-${randomBytes(24).toString('base64url')}`;
  const eventsSecret = randomBytes(32).toString('base64url');
  const encryptionKey = randomBytes(32).toString('hex');
  const logDir = resolve(__dirname, '..', '..', '..', '..', 'tmp', 'trust-logs', `${name}-${process.pid}`);
  let stack: Stack;
  try {
    stack = await startStack({
      logDir,
      env: {
        DATABASE_URL: db.url,
        ASK_KEY_PREFIX: `trust-${randomUUID()}`,
        ASK_ADMIN_KEY: adminKey,
        ASK_EVENTS_SECRET: eventsSecret,
        ASK_ENCRYPTION_KEY: encryptionKey,
        ASK_RATE_LIMIT_PER_MINUTE: '100000',
        INGEST_RATE_LIMIT_PER_MINUTE: '100000',
        LOCAL_LLM_CHUNK_DELAY_MS: '0',
        LOG_LEVEL: 'verbose',
        ...env,
      },
    });
  } catch (err) {
    await db.drop().catch(() => undefined);
    throw err;
  }
  const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(encryptionKey));
  const keys = new ApiKeysRepository(db.dataSource);

  const call: TrustStack['call'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = {};
    if (options.key !== undefined) headers['authorization'] = `Bearer ${options.key}`;
    if (options.json !== undefined) headers['content-type'] = 'application/json';
    const controller = new AbortController();
    const response = await fetch(new URL(path, stack.gatewayUrl), {
      method,
      headers,
      body: options.json === undefined ? undefined : JSON.stringify(options.json),
      signal: controller.signal,
    });
    return readReply(response, controller, options.sseMs);
  };

  return {
    db,
    stack,
    projects,
    keys,
    adminKey,
    eventsSecret,
    encryptionKey,
    call,
    async project(projectName, settings, credentials) {
      const created = await projects.create({ ...settings, name: projectName });
      if (credentials) await projects.setCredentials(created.id, credentials as never);
      const key = (await keys.create(created.id, 'trust suite')).key;
      return { id: created.id, key, client: new AskClient(stack.gatewayUrl, key) };
    },
    logs: () =>
      readdirSync(logDir)
        .filter((f) => f.endsWith('.log'))
        .map((f) => readFileSync(join(logDir, f), 'utf8'))
        .join('\n'),
    async close() {
      await stack.stop(5_000).catch(() => undefined);
      await removeTestKeys(stack.env).catch(() => undefined);
      await db.drop().catch(() => undefined);
    },
  };
}

/** A TCP server on 127.0.0.1 and ::1 (one port) that counts connections and answers none of them. */
export interface Canary {
  port: number;
  /** Connections received so far, with the local address each came in on. */
  connections: string[];
  close(): Promise<void>;
}

/** Starts the canary on a free port (the IPv6 side on the same port; skipped if ::1 cannot bind). */
export async function startCanary(): Promise<Canary> {
  const connections: string[] = [];
  const sockets = new Set<Socket>();
  const make = () =>
    createServer((socket) => {
      connections.push(`${socket.localAddress}:${socket.localPort}`);
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.destroy();
    });
  const listen = (server: Server, port: number, host: string) =>
    new Promise<number>((done, fail) => {
      server.once('error', fail);
      server.listen(port, host, () => done((server.address() as { port: number }).port));
    });
  const v4 = make();
  const port = await listen(v4, 0, '127.0.0.1');
  const v6 = make();
  const servers = [v4];
  if (
    await listen(v6, port, '::1').then(
      () => true,
      () => false,
    )
  )
    servers.push(v6);
  return {
    port,
    connections,
    close: () =>
      Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((done) => {
              for (const socket of sockets) socket.destroy();
              s.close(() => done());
            }),
        ),
      ).then(() => undefined),
  };
}
