import { z } from 'zod';
import { registerSecrets } from '@ask/ask-errors';
import { parsePriceOverrides } from '@ask/model-catalog';
import { parseAmbientCredentialsProjects } from './ambient-credentials';
import { parseAllowList, parseStaticHosts } from './egress';

/** A string setting parsed by `parse`; a parse error becomes the variable's validation message. */
function parsedString<T>(parse: (value: string | undefined) => T) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      try {
        return parse(value);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    });
}

/**
 * The service's settings, read once from the environment at boot and validated; everything else reads
 * settings only through the object this returns. Defaults fit the development machine (local
 * PostgreSQL with trust auth, local Redis) and the embedded `local` providers.
 */
const schema = z.object({
  DATABASE_URL: z.string().url().default('postgres://postgres@127.0.0.1:5432/ask'),
  /**
   * Largest number of PostgreSQL connections one app process keeps (its pg pool's `max`). Size the
   * fleet so that the sum over every process stays under the server's `max_connections` (less its
   * `superuser_reserved_connections` when the apps do not connect as a superuser); a process at its
   * cap queues its queries, a server at its cap refuses new connections (53300), which the gateway
   * answers with a typed 503 `service_unavailable` and `Retry-After`.
   */
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(1_000).default(10),
  /**
   * How long a query waits for a pooled connection (the pool at its cap, or the server slow to accept
   * one), in milliseconds; then it fails with pg-pool's "timeout exceeded when trying to connect"
   * (a typed 503 at the gateway). 0 waits without limit.
   */
  DATABASE_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  REDIS_URL: z.string().url().default('redis://127.0.0.1:6379/0'),
  /**
   * Redis Cluster (docs/ARCHITECTURE.md "Redis Cluster"): `host:port` of one or more of its nodes,
   * comma-separated; the rest are discovered. Set, every app connects with an ioredis `Cluster` client
   * (REDIS_URL then unused but for its password and TLS, none here), BullMQ queues get one hash tag
   * each, and ask/ingestion streams are spread over ASK_STREAM_HASH_TAGS tags (default 16). Unset
   * (default): one Redis server at REDIS_URL, key names unchanged.
   */
  REDIS_CLUSTER_NODES: parsedString(parseClusterNodes),
  /**
   * Prefix for every BullMQ key and event stream, so test runs never share keys with a running stack.
   * May carry a `{hash tag}` (e.g. `{ask}`): on a Redis Cluster every key then lands in that tag's one
   * slot (one master holds everything); without one, the apps add per-queue and per-stream tags.
   */
  ASK_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9:_{}-]+$/)
    .refine(balancedTag, 'a {hash tag} must be one non-empty {…} with no nested braces')
    .default('ask-service'),
  GATEWAY_PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /**
   * Address the gateway listens on. Loopback by default, so a bare `node …/main.ts` is not reachable
   * from the network; containers set `0.0.0.0` (docker-compose.yml).
   */
  GATEWAY_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * Provider endpoints the operator allows (comma- or space-separated `http(s)://host[:port][/path]`).
   * A project key may set an LLM or embedding `baseUrl` only inside this list; a listed endpoint may be
   * an internal address (a local Ollama on `http://127.0.0.1:11434`); any other endpoint that is, or
   * resolves to, a loopback, private, link-local or otherwise non-public address is refused.
   */
  ASK_PROVIDER_URL_ALLOWLIST: parsedString(parseAllowList),
  /**
   * Fixed addresses for provider host names, consulted before DNS (`host=address[|address]`, commas
   * between entries, like curl's `--resolve`). The addresses are checked like DNS answers.
   */
  ASK_PROVIDER_RESOLVE: parsedString(parseStaticHosts),
  /**
   * Projects (ids, comma- or space-separated) that may call Vertex or Bedrock with this process's own
   * cloud credentials (Google Application Default Credentials: GOOGLE_APPLICATION_CREDENTIALS, gcloud's
   * ADC file, the metadata server; the AWS default chain: AWS_* variables, profiles, container or
   * instance roles) when they store none. Unset (default): none; such a project gets the typed 412.
   * Set the same value on the gateway and every worker.
   */
  ASK_AMBIENT_CREDENTIALS_PROJECTS: parsedString(parseAmbientCredentialsProjects),
  /** Health/metrics port of each worker; 0 picks a free port. */
  RETRIEVAL_HEALTH_PORT: z.coerce.number().int().min(0).max(65535).default(3101),
  SYNTHESIS_HEALTH_PORT: z.coerce.number().int().min(0).max(65535).default(3102),
  /** Health/metrics port of the ingestion worker; 0 picks a free port. */
  INGESTION_HEALTH_PORT: z.coerce.number().int().min(0).max(65535).default(3103),
  /**
   * Address every worker's health/metrics port listens on. Loopback by default, like GATEWAY_HOST: a
   * scraper on another host needs the operator to set `0.0.0.0` (or one interface's address), and
   * should then set ASK_METRICS_TOKEN too.
   */
  WORKER_HEALTH_HOST: z.string().min(1).default('127.0.0.1'),
  /**
   * Bearer token `/metrics` requires, on the gateway and on every worker's health port (compared in
   * constant time; 401 without it). Unset: `/metrics` is open to whoever reaches the port. `/health`
   * stays open either way (orchestrator probes carry no token).
   */
  ASK_METRICS_TOKEN: z.string().min(16).optional(),
  RETRIEVAL_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  /** Ingestion jobs run at once per ingestion worker process (chunking is CPU work: keep it near the cores). */
  INGESTION_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  /**
   * Worker threads the embedded semantic embedder (`local-semantic`) uses per ingestion worker process,
   * each with its own model (~240 MB): 2 uses both cores of the reference machine (bench/RESULTS.md,
   * "Semantic ingestion throughput").
   */
  INGESTION_EMBEDDING_THREADS: z.coerce.number().int().min(1).max(16).default(2),
  /**
   * Lock of a running ingestion job, in milliseconds (renewed every half of it). A killed worker's
   * ingestion is taken up again, from its stored upload, once the lock has lapsed.
   */
  INGESTION_LOCK_DURATION_MS: z.coerce.number().int().min(1000).max(3_600_000).default(120_000),
  SYNTHESIS_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
  /**
   * Synthesis jobs of one project running at once, across the fleet (Redis-counted leases); 0: no cap.
   * Over it a project's next job waits (parked) while its running ones hold their slots, so a project
   * whose provider is slow leaves slots to the others. Default 6: three quarters of one worker's 8
   * slots; set it to about ¾ of the fleet's synthesis slots (workers × SYNTHESIS_CONCURRENCY).
   */
  SYNTHESIS_PROJECT_MAX_RUNNING: z.coerce.number().int().min(0).max(100_000).default(6),
  /**
   * Fair shares between projects in the ask queues (docs/ARCHITECTURE.md "Fair shares"): `on`
   * (default) orders jobs by start-time fair queuing and applies the *_PROJECT_MAX_RUNNING caps;
   * `off` is strict FIFO without caps (as before; the fairness bench's baseline).
   */
  ASK_FAIR_SHARES: z.enum(['on', 'off']).default('on'),
  /** Retrieval jobs of one project running at once, across the fleet; 0 (default): no cap (retrieval is short). */
  RETRIEVAL_PROJECT_MAX_RUNNING: z.coerce.number().int().min(0).max(100_000).default(0),
  /** How long one summariser call (conversation memory) may take, in milliseconds; then it is abandoned. */
  MEMORY_SUMMARY_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** Summary jobs (conversation memory) run at once per synthesis worker. */
  MEMORY_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
  /**
   * Lock of a running synthesis job, in milliseconds, renewed every SYNTHESIS_LOCK_RENEW_MS while the
   * worker lives. A killed worker's job is taken up again once its lock has lapsed and a stalled check
   * has run: within SYNTHESIS_LOCK_DURATION_MS + SYNTHESIS_STALLED_INTERVAL_MS of the kill (8 s with
   * the defaults; BullMQ's own defaults, 30 s and 30 s, froze an answer for 32–44 s after a worker was killed). A
   * worker whose event loop stalls longer than lock − renewal (4 s) loses the job to another worker;
   * its run then stops (fencing), and the new run calls the provider again.
   */
  SYNTHESIS_LOCK_DURATION_MS: z.coerce.number().int().min(1000).max(600_000).default(6_000),
  /**
   * How often a synthesis worker renews the locks of its running jobs, in milliseconds; below the lock.
   * Default a third of SYNTHESIS_LOCK_DURATION_MS (2 s with the default lock).
   */
  SYNTHESIS_LOCK_RENEW_MS: z.coerce.number().int().min(250).max(300_000).optional(),
  /** How often each synthesis worker looks for stalled jobs (lapsed locks), in milliseconds. */
  SYNTHESIS_STALLED_INTERVAL_MS: z.coerce.number().int().min(500).max(600_000).default(2_000),
  /** How long an ask may take from acceptance to its last event, in milliseconds. */
  ASK_DEADLINE_MS: z.coerce.number().int().min(1000).default(120_000),
  /**
   * How often the retrieval worker reconciles accepted asks (PostgreSQL `asks`) with Redis, in
   * milliseconds: an ask whose job and stream Redis lost is re-enqueued, or ended with a typed error,
   * at most this long (plus the 5 s an ask is left alone after acceptance) after the loss.
   */
  ASK_RECONCILE_INTERVAL_MS: z.coerce.number().int().min(500).max(600_000).default(10_000),
  /** How long a finished ask's event stream is kept in Redis, in seconds. */
  ASK_EVENTS_TTL_S: z.coerce.number().int().min(60).default(86_400),
  /** Admin key that creates projects and project API keys; unset disables the admin routes. */
  ASK_ADMIN_KEY: z.string().min(16).optional(),
  /** 32 bytes, base64 or hex: encrypts provider credentials at rest (AES-256-GCM). */
  ASK_ENCRYPTION_KEY: z.string().optional(),
  /**
   * HMAC key of the per-ask events capability tokens (`eventsUrl?token=`). Must be the same on every
   * gateway replica. Unset: derived (HKDF-SHA256) from ASK_ENCRYPTION_KEY, else ASK_ADMIN_KEY; the
   * gateway refuses to boot when none of the three is set.
   */
  ASK_EVENTS_SECRET: z.string().min(32).optional(),
  /**
   * Open event streams (SSE clients) per ask (and, counted apart, per ingestion) across every gateway
   * of the deployment (leases in Redis); one more answers 429 `rate_limited`.
   */
  ASK_STREAMS_PER_ASK: z.coerce.number().int().min(1).max(1_000_000).default(20),
  /** Open ask event streams (and, counted apart, ingestion streams) per project across every gateway; one more answers 429. */
  ASK_STREAMS_PER_PROJECT: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
  /**
   * Open event streams of every kind on one gateway process (each holds a socket and a relay); one
   * more answers 429 `rate_limited` (`limit=streams_per_process`). Default 5,000.
   */
  ASK_STREAMS_PER_PROCESS: z.coerce.number().int().min(1).max(1_000_000).default(5_000),
  /**
   * How often an open event stream (ask or ingestion SSE) opened with a project API key checks that
   * the key still verifies, in milliseconds: a revoked key's streams end with a typed 401 `error`
   * event at most this long (plus one PostgreSQL lookup) after `DELETE …/keys/:keyId`.
   */
  ASK_STREAM_KEY_RECHECK_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
  /** Redis connections the gateway's event relay reads with (blocking XREAD over many streams each). */
  ASK_STREAM_READERS: z.coerce.number().int().min(1).max(64).default(2),
  /**
   * 0 (default on one Redis server): ask keys without hash tags. N > 0 (default 16 with
   * REDIS_CLUSTER_NODES, where 0 is refused): every ask's keys carry one of N hash tags and the gateway
   * reads them with one reader per tag's slot (≤ N connections, ASK_STREAM_READERS then unused). The
   * same value on every process of a deployment.
   */
  ASK_STREAM_HASH_TAGS: z.coerce.number().int().min(0).max(64).optional(),
  /** Bytes an SSE client may leave unread before the gateway drops it (it resumes with Last-Event-ID). */
  ASK_STREAM_BUFFER_BYTES: z.coerce.number().int().min(16_384).max(268_435_456).default(1_048_576),
  /** Asks accepted per project per minute (all its keys together), shared across replicas through Redis. */
  ASK_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(60),
  /** Ingestion requests (knowledge, insights) accepted per project per minute, shared through Redis. */
  INGEST_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(30),
  /**
   * How long streamed provider text may be held before it is published as one `delta` event (ms;
   * the first chunk is never held; 1,024 held characters are published at once). 0 publishes every
   * provider chunk as its own delta (no coalescing).
   */
  SYNTHESIS_DELTA_INTERVAL_MS: z.coerce.number().int().min(0).max(1_000).default(25),
  /** Pause between the local stand-in LLM's streamed chunks, in milliseconds (0 in benchmarks). */
  LOCAL_LLM_CHUNK_DELAY_MS: z.coerce.number().int().min(0).max(5_000).default(25),
  LOG_LEVEL: z.enum(['error', 'warn', 'log', 'debug', 'verbose']).default('log'),
  /**
   * The operator's prices, over the built-in table (libs/model-catalog `PRICE_TABLE`): a JSON array of
   * `{ model: <regex on the normalised id>, provider?, input, cacheRead, cacheWrite, output, source? }`,
   * prices in USD per million tokens. Each call is costed at the price in force when it is made.
   */
  ASK_PRICE_OVERRIDES: parsedString(parsePriceOverrides),
  /**
   * OpenTelemetry tracing (docs/telemetry.md "Traces"): `off` (default: no tracer, no span, nothing
   * exported) or `otlp` (spans of every ask exported over OTLP/HTTP JSON to OTEL_EXPORTER_OTLP_ENDPOINT).
   * An operator setting only: no project setting names an endpoint.
   */
  ASK_TRACING: z.enum(['off', 'otlp']).default('off'),
  /** The OTLP/HTTP collector's base URL (traces go to `<endpoint>/v1/traces`); the OpenTelemetry default. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .string()
    .url()
    .refine((url) => /^https?:/.test(url), 'must be an http(s) URL')
    // Credentials go in OTEL_EXPORTER_OTLP_HEADERS (read by the exporter), never in a URL that gets logged.
    .refine((url) => !/^https?:\/\/[^/]*@/.test(url), 'must not carry user-info')
    .default('http://localhost:4318'),
  /** How long finished spans wait before they are exported in one batch, in milliseconds (the SDK's default). */
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(1).max(60_000).default(5_000),
});

/** The lock must outlast its renewal period, or every job would look stalled between renewals. */
const checked = schema
  .transform((c) => ({
    ...c,
    SYNTHESIS_LOCK_RENEW_MS: c.SYNTHESIS_LOCK_RENEW_MS ?? Math.floor(c.SYNTHESIS_LOCK_DURATION_MS / 3),
  }))
  .refine((c) => c.SYNTHESIS_LOCK_RENEW_MS < c.SYNTHESIS_LOCK_DURATION_MS, {
    path: ['SYNTHESIS_LOCK_RENEW_MS'],
    message: 'must be below SYNTHESIS_LOCK_DURATION_MS',
  })
  .refine((c) => !(c.REDIS_CLUSTER_NODES && c.ASK_STREAM_HASH_TAGS === 0), {
    path: ['ASK_STREAM_HASH_TAGS'],
    message: 'must be at least 1 with REDIS_CLUSTER_NODES (one XREAD and one script name one slot)',
  });

/** Streams' hash tags on a Redis Cluster when ASK_STREAM_HASH_TAGS is unset: 16 slots, spread over the masters. */
export const CLUSTER_DEFAULT_STREAM_HASH_TAGS = 16;

/** The settings, with ASK_STREAM_HASH_TAGS resolved (0 on one server, 16 on a Cluster unless set). */
export type AppConfig = Readonly<
  Omit<z.infer<typeof checked>, 'ASK_STREAM_HASH_TAGS'> & { ASK_STREAM_HASH_TAGS: number }
>;

/** One node of a Redis Cluster, as REDIS_CLUSTER_NODES names it. */
export interface ClusterNode {
  host: string;
  port: number;
}

/**
 * Parses REDIS_CLUSTER_NODES: `host:port` entries separated by commas (or spaces); undefined when
 * unset or blank.
 * @throws Error naming the first entry that is not `host:port` with a port in 1–65535.
 */
export function parseClusterNodes(value: string | undefined): ClusterNode[] | undefined {
  const entries = (value ?? '').split(/[\s,]+/).filter(Boolean);
  if (entries.length === 0) return undefined;
  return entries.map((entry) => {
    const match = /^([^\s:]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$/.exec(entry);
    const port = match ? Number(match[2]) : 0;
    if (!match || port < 1 || port > 65535) throw new Error(`"${entry}" is not host:port`);
    return { host: match[1].replace(/^\[|\]$/g, ''), port };
  });
}

/** True when `prefix` has no braces, or exactly one `{…}` with something inside and no nesting. */
function balancedTag(prefix: string): boolean {
  const braces = prefix.replace(/[^{}]/g, '');
  if (braces === '') return true;
  return braces === '{}' && /\{[^{}]+\}/.test(prefix);
}

/** Raised at boot when the environment is invalid; the message names each bad variable. */
export class ConfigError extends Error {}

/**
 * Parses and validates settings from `env` (default `process.env`).
 * @throws ConfigError naming every invalid variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = checked.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid environment:\n  ${lines.join('\n  ')}`);
  }
  // Exact values of the process-wide secrets are redacted from every text that leaves the process.
  registerSecrets(
    [
      parsed.data.ASK_ADMIN_KEY,
      parsed.data.ASK_ENCRYPTION_KEY,
      parsed.data.ASK_EVENTS_SECRET,
      parsed.data.ASK_METRICS_TOKEN,
    ],
    {
      pinned: true,
    },
  );
  const tags =
    parsed.data.ASK_STREAM_HASH_TAGS ?? (parsed.data.REDIS_CLUSTER_NODES ? CLUSTER_DEFAULT_STREAM_HASH_TAGS : 0);
  return Object.freeze({ ...parsed.data, ASK_STREAM_HASH_TAGS: tags });
}

let processConfig: AppConfig | undefined;

/**
 * The process's one config: `process.env` parsed by {@link loadConfig} on the first call, the same
 * frozen object on every later one. What `AppConfigModule` provides and what decorator options read
 * (`@Processor` lock settings are fixed when the class is declared, before Nest builds anything), so
 * a worker's decorators and its injected config are one parse of one environment.
 * @throws ConfigError naming every invalid variable (on the first call; nothing is cached then).
 */
export function appConfig(): AppConfig {
  processConfig ??= loadConfig();
  return processConfig;
}
