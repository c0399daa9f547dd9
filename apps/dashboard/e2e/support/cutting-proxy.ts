import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** One events request as the proxy saw it. */
export interface EventsRequest {
  url: string;
  lastEventId: string | undefined;
  status: number | undefined;
}

/**
 * A loopback HTTP proxy between the browser and the gateway, so a test can drop the browser's SSE
 * connection the way a flaky network would, with no hook in the gateway. Everything is forwarded
 * as is; after `cutNextEventsStream(n)`, the next events stream is forwarded up to the middle of its
 * (n+1)-th `delta` event and then both sockets are destroyed.
 */
export class CuttingProxy {
  readonly eventsRequests: EventsRequest[] = [];
  private cutAfterDeltas: number | null = null;
  private cutDone: (() => void) | null = null;
  private readonly sockets = new Set<Socket>();
  private server: Server | null = null;
  url = '';

  constructor(private readonly target: URL) {}

  async start(): Promise<this> {
    const server = createServer((req, res) => this.forward(req, res));
    server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  /** Arms the cut for the next events stream; resolves once it has been cut. */
  cutNextEventsStream(afterDeltas: number): Promise<void> {
    this.cutAfterDeltas = afterDeltas;
    return new Promise((resolve) => (this.cutDone = resolve));
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private forward(req: IncomingMessage, res: ServerResponse): void {
    const isEvents = /^\/api\/v1\/asks\/[^/]+\/events/.test(req.url ?? '');
    const record: EventsRequest | null = isEvents
      ? { url: req.url ?? '', lastEventId: headerOf(req, 'last-event-id'), status: undefined }
      : null;
    if (record) this.eventsRequests.push(record);
    const cutAfter = isEvents ? this.cutAfterDeltas : null;
    if (cutAfter !== null) this.cutAfterDeltas = null;

    const upstream = httpRequest(
      { host: this.target.hostname, port: this.target.port, method: req.method, path: req.url, headers: req.headers },
      (upstreamRes) => {
        if (record) record.status = upstreamRes.statusCode;
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        if (cutAfter === null) {
          upstreamRes.pipe(res);
          return;
        }
        let seen = Buffer.alloc(0);
        let forwarded = 0;
        upstreamRes.on('data', (chunk: Buffer) => {
          seen = Buffer.concat([seen, chunk]);
          const cutAt = nthIndexOf(seen, 'event: delta', cutAfter + 1);
          if (cutAt < 0) {
            res.write(seen.subarray(forwarded));
            forwarded = seen.length;
            return;
          }
          // Through the n-th delta, plus half a line of the next event: the browser must drop it.
          res.write(seen.subarray(forwarded, cutAt + 'event: de'.length), () => {
            req.socket.destroy();
            upstreamRes.destroy();
            this.cutDone?.();
            this.cutDone = null;
          });
          forwarded = seen.length;
          upstreamRes.removeAllListeners('data');
        });
        upstreamRes.on('end', () => res.end());
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  }
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Byte offset of the n-th (1-based) occurrence of `needle`, or -1. */
function nthIndexOf(haystack: Buffer, needle: string, n: number): number {
  let from = 0;
  for (let i = 0; i < n; i += 1) {
    const at = haystack.indexOf(needle, from);
    if (at < 0) return -1;
    if (i === n - 1) return at;
    from = at + needle.length;
  }
  return -1;
}
