import { createServer } from 'node:http';
import { constants as h2constants, createServer as createH2Server } from 'node:http2';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';
import { anthropicRoutes } from './routes/anthropic.routes';
import { bedrockRoutes } from './routes/bedrock.routes';
import { ollamaRoutes } from './routes/ollama.routes';
import { openaiRoutes } from './routes/openai.routes';
import { vertexRoutes } from './routes/vertex.routes';
import type {
  EnforceOptions,
  FakeFault,
  FakeRequest,
  FakeResponse,
  FaultKind,
  RecordedRequest,
  Route,
  RouteContext,
  StreamPart,
} from './route';

export type { EnforceOptions, FakeFault, FaultKind, RecordedRequest } from './route';

/** Options of `startFakeUpstream`. */
export interface FakeUpstreamOptions {
  /** TCP port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** Pause between streamed chunks, in milliseconds; default 2 (so clients see several reads). */
  chunkDelayMs?: number;
  /** How OpenAI-wire chat routes count prompts and which windows they enforce (see `EnforceOptions`). */
  enforce?: EnforceOptions;
  /**
   * The answer OpenAI-wire chat routes stream, one SSE chunk per element (default
   * `FAKE_ANSWER_CHUNKS`); e.g. 1,000 one-token chunks to measure a long streamed answer.
   */
  answerChunks?: readonly string[];
}

/** A running fake upstream. */
export interface FakeUpstream {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly url: string;
  readonly port: number;
  /** Every request received, oldest first; secret-bearing headers are reduced to their scheme. */
  readonly requests: RecordedRequest[];
  /**
   * Injects `fault` into the next `count` (default 1) requests to generation and embedding routes, or
   * to count endpoints when `fault.endpoint` is `count`. A string is shorthand for `{ kind }`.
   */
  setFault(fault: FakeFault | FaultKind, count?: number): void;
  /** Removes pending faults. */
  clearFaults(): void;
  /** Stops listening and destroys open connections (stalled ones included). */
  close(): Promise<void>;
}

const ROUTES: readonly Route[] = [
  ...openaiRoutes,
  ...anthropicRoutes,
  ...bedrockRoutes,
  ...vertexRoutes,
  ...ollamaRoutes,
];

const FAULT_KINDS: readonly FaultKind[] = [
  '429',
  '500',
  'stall',
  'disconnect',
  'truncate',
  'unterminated-final',
  'silent-truncation',
  'content-filter',
  'overflow',
];

/** The first pending fault meant for this kind of route (count endpoints take only `endpoint: 'count'`), removed. */
function takeFault(pending: FakeFault[], route: Route): FakeFault | undefined {
  const index = pending.findIndex((f) => (f.endpoint === 'count') === !route.faultable);
  return index < 0 ? undefined : pending.splice(index, 1)[0];
}

/** Which credential scheme a request carries, never the credential itself. */
function authScheme(req: FakeRequest): RecordedRequest['auth'] {
  const authorization = req.headers['authorization'];
  if (typeof authorization === 'string') {
    if (authorization.startsWith('AWS4-HMAC-SHA256 ')) return 'aws-sigv4';
    if (/^Bearer \S+/.test(authorization)) return 'bearer';
  }
  if (typeof req.headers['x-api-key'] === 'string' && req.headers['x-api-key'].length > 0) return 'x-api-key';
  if (typeof req.headers['api-key'] === 'string' && req.headers['api-key'].length > 0) return 'api-key';
  return null;
}

const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'api-key', 'x-amz-security-token', 'x-goog-api-key']);

function safeHeaders(req: FakeRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    out[key] = SECRET_HEADERS.has(key) ? '[redacted]' : Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function readBody(req: FakeRequest): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseHeaderFault(req: FakeRequest): FakeFault | undefined {
  const value = req.headers['x-fake-fault'];
  if (typeof value !== 'string') return undefined;
  const kind = value.trim() as FaultKind;
  return FAULT_KINDS.includes(kind) ? { kind } : undefined;
}

/** Drops a request mid-answer: RST_STREAM on HTTP/2, the TCP connection on HTTP/1.1. */
function drop(req: FakeRequest): void {
  if ('stream' in req) req.stream.close(h2constants.NGHTTP2_INTERNAL_ERROR);
  else req.socket.destroy();
}

/** True once the client has gone away. */
function gone(res: FakeResponse): boolean {
  return 'stream' in res ? res.stream.destroyed : res.destroyed;
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Starts the loopback fake upstream: one `node:http` server on 127.0.0.1 that speaks OpenAI, Azure
 * OpenAI / Foundry, Anthropic, Bedrock Runtime, Vertex AI and Ollama wire formats (see the route
 * modules for the paths), counts prompts with a real tokenizer, enforces each model's catalog window
 * with that provider's own error, streams `FAKE_ANSWER` in that provider's chunk format and injects
 * faults (`x-fake-fault` header, or `setFault`).
 *
 * @returns once listening. Never binds anything but 127.0.0.1.
 */
export async function startFakeUpstream(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  const pending: FakeFault[] = [];
  const chunkDelayMs = options.chunkDelayMs ?? 2;

  const handle = async (req: FakeRequest, res: FakeResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = ROUTES.find((r) => r.method === req.method && r.pattern.test(url.pathname));
    const raw = await readBody(req);
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      route: route?.name ?? 'not-found',
      auth: authScheme(req),
      headers: safeHeaders(req),
      body: undefined,
    };
    requests.push(record);
    if (!route) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `fake upstream: no route for ${req.method} ${url.pathname}` } }));
      return;
    }
    let body: Record<string, unknown> = {};
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'fake upstream: the body is not JSON' } }));
        return;
      }
    }
    record.body = body;
    const fault = (route.faultable ? parseHeaderFault(req) : undefined) ?? takeFault(pending, route);
    if (fault) record.fault = fault.kind;
    const match = url.pathname.match(route.pattern) ?? [];
    const ctx: RouteContext = {
      enforce: options.enforce ?? {},
      answerChunks: options.answerChunks,
      req,
      res,
      url,
      params: match.slice(1).map((p) => decodeURIComponent(p ?? '')),
      body,
      fault,
      record,
      json(status, payload, headers = {}) {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(payload));
      },
      async stream(contentType, parts: StreamPart[], afterChunks = 2) {
        res.writeHead(200, {
          'content-type': contentType,
          'cache-control': 'no-cache',
          'x-request-id': `req_fake_${requests.length}`,
        });
        let written = 0;
        for (const part of parts) {
          if (fault?.kind === 'truncate' && part.final) break;
          if (fault?.kind === 'disconnect' && written >= (fault.afterChunks ?? afterChunks)) {
            drop(req);
            return;
          }
          if (gone(res)) return;
          const unterminated =
            fault?.kind === 'unterminated-final' && (part.completes || part === parts[parts.length - 1]);
          const data = unterminated && typeof part.data === 'string' ? part.data.replace(/[\r\n]+$/, '') : part.data;
          (res as { write(data: string | Uint8Array): boolean }).write(data);
          written++;
          if (unterminated) break;
          if (chunkDelayMs > 0) await delay(chunkDelayMs);
        }
        res.end();
      },
    };
    if (route.auth && !route.auth.accepts(record.auth)) {
      route.auth.reject(ctx);
      return;
    }
    if (fault?.kind === 'stall') return; // no bytes until the client gives up or close() destroys the socket
    if (fault?.kind === '429') return route.errors.rateLimited(ctx, fault.retryAfterSeconds ?? 1);
    if (fault?.kind === '500') return route.errors.serverError(ctx);
    if (fault?.kind === 'content-filter') return route.errors.contentFilter(ctx, fault.message);
    if (fault?.kind === 'redirect') {
      res.writeHead(307, { location: fault.location ?? '/', 'content-type': 'application/json' });
      res.end('{}');
      return;
    }
    if (fault?.kind === 'overflow' && route.errors.overflow)
      return route.errors.overflow(ctx, fault.promptTokens ?? 210_000, fault.window ?? 200_000);
    await route.handle(ctx);
  };

  const onRequest = (req: FakeRequest, res: FakeResponse) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `fake upstream bug: ${(err as Error).message}` } }));
      } else drop(req);
    });
  };
  // One port, two protocols: a connection that opens with the HTTP/2 preface ("PRI * HTTP/2.0") goes
  // to the h2c server (the AWS SDK's default transport for Bedrock Runtime), any other to HTTP/1.1.
  const h1 = createServer(onRequest);
  const h2 = createH2Server(onRequest);
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.once('data', (first: Buffer) => {
      socket.pause();
      socket.unshift(first);
      (first.subarray(0, 3).toString('latin1') === 'PRI' ? h2 : h1).emit('connection', socket);
      process.nextTick(() => socket.resume());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    setFault(fault, count = 1) {
      const f = typeof fault === 'string' ? { kind: fault } : fault;
      for (let i = 0; i < count; i++) pending.push(f);
    },
    clearFaults() {
      pending.length = 0;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
    },
  };
}
