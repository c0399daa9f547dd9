/**
 * What the hostile-input bench measures of a running stack from outside: each app's event-loop delay
 * (prom-client's `monitorEventLoopDelay` gauges on its /metrics), a process's TCP connections to
 * Redis (its socket inodes matched with /proc/net/tcp), its RSS, and idle SSE clients held open.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { request, type ClientRequest } from 'node:http';

/** Event-loop delay of one process over one window, in milliseconds. */
export interface LoopDelay {
  p99Ms: number;
  maxMs: number;
}

/**
 * Reads `nodejs_eventloop_lag_p99_seconds` and `nodejs_eventloop_lag_max_seconds` from a Prometheus
 * text endpoint. prom-client's default metrics feed both from `perf_hooks.monitorEventLoopDelay`
 * (10 ms resolution) and reset the histogram at every collection, so each scrape answers for the
 * window since the previous scrape of the same process (nothing else scrapes these processes here).
 * @throws Error when the endpoint does not answer 200 or lacks either gauge.
 */
export async function scrapeLoopDelay(metricsUrl: string): Promise<LoopDelay> {
  const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(30_000) });
  if (!response.ok) throw new Error(`${metricsUrl} answered ${response.status}`);
  const text = await response.text();
  const gauge = (name: string) => {
    const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text);
    if (!match) throw new Error(`${metricsUrl} has no ${name}`);
    return Math.round(Number(match[1]) * 1000 * 10) / 10;
  };
  return { p99Ms: gauge('nodejs_eventloop_lag_p99_seconds'), maxMs: gauge('nodejs_eventloop_lag_max_seconds') };
}

/**
 * TCP connections process `pid` holds to `port` (Redis: 6379), whatever their client names: the
 * socket inodes among its file descriptors whose remote port in /proc/<pid>/net/tcp{,6} is `port`.
 */
export function connectionsTo(pid: number, port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]);
    } catch {
      // closed meanwhile
    }
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let n = 0;
  for (const table of ['tcp', 'tcp6']) {
    let rows: string[];
    try {
      rows = readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1);
    } catch {
      continue;
    }
    for (const row of rows) {
      const cols = row.trim().split(/\s+/);
      // cols: sl local rem st tx:rx tr:when retrnsmt uid timeout inode; st 01 = ESTABLISHED
      if (cols.length > 9 && cols[2].endsWith(`:${hexPort}`) && cols[3] === '01' && inodes.has(cols[9])) n += 1;
    }
  }
  return n;
}

/** VmRSS of `pid` in MiB (one decimal), or null when the process is gone. */
export function rssMiB(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round((Number(match[1]) / 1024) * 10) / 10 : null;
  } catch {
    return null;
  }
}

/**
 * CPU time and run-queue wait of a process's main thread (its event loop), in ms, from
 * /proc/<pid>/schedstat (`cpu_ns wait_ns slices`): an event-loop delay with as much run-queue wait
 * in its window is the machine's CPUs being busy elsewhere, not the process blocking its own loop.
 */
export function schedStat(pid: number | undefined): { cpuMs: number; waitMs: number } | null {
  if (!pid) return null;
  try {
    const [cpu, wait] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return { cpuMs: Math.round(cpu / 1e6), waitMs: Math.round(wait / 1e6) };
  } catch {
    return null;
  }
}

/** An idle SSE client: one socket, counts the events it receives, never reads them further. */
export interface IdleClient {
  /** HTTP status once the response started (0 before, or on a network error). */
  status: number;
  /** The network error's code (ECONNRESET, …) when the request failed before a response. */
  error?: string;
  events: number;
  ended: boolean;
  /** Resolves once the first event arrived, or the response failed or ended. */
  ready: Promise<void>;
  close(): void;
}

/**
 * Opens `GET url` as an SSE client on its own socket (no agent pooling, as a browser tab would) with
 * the project key in `Authorization`. Events are counted by their `event:` lines.
 */
export function openIdleClient(url: string, apiKey: string): IdleClient {
  let resolveReady!: () => void;
  const client: IdleClient = {
    status: 0,
    events: 0,
    ended: false,
    ready: new Promise<void>((r) => (resolveReady = r)),
    close: () => req.destroy(),
  };
  const end = () => {
    client.ended = true;
    resolveReady();
  };
  const req: ClientRequest = request(
    url,
    { agent: false, headers: { authorization: `Bearer ${apiKey}`, accept: 'text/event-stream' } },
    (res) => {
      client.status = res.statusCode ?? 0;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const n = chunk.match(/^event:/gm)?.length ?? 0;
        if (n) {
          client.events += n;
          resolveReady();
        }
      });
      res.on('end', end);
      res.on('error', end);
      res.on('close', end);
    },
  );
  req.on('error', (err: NodeJS.ErrnoException) => {
    if (client.status === 0) client.error = err.code ?? err.message;
    end();
  });
  req.end();
  return client;
}
