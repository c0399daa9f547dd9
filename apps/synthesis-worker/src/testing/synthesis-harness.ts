/**
 * The real SynthesisService for specs and benches, built in one call: a throwaway migrated database
 * (`createTestDatabase`), the machine's Redis under the spec's own key prefix, the fake upstream on
 * loopback (allow-listed), the repositories and the config (`loadConfig` over the process
 * environment). Nothing of ours is mocked. Not a spec: imported by the specs and the memory bench.
 */
import { Queue } from 'bullmq';
import type Redis from 'ioredis';
import { QueueName } from '@ask/ask-contracts';
import { type AppConfig, loadConfig } from '@ask/config';
import { AskEventStream } from '@ask/event-stream';
import { type FakeUpstream, type FakeUpstreamOptions, startFakeUpstream } from '@ask/fake-upstream';
import {
  CredentialsCipher,
  LearnedWindowsRepository,
  ProjectsRepository,
  ProviderCallsRepository,
  SessionsRepository,
  SummariesRepository,
  UsageRepository,
} from '@ask/persistence';
import { createTestDatabase, type TestDatabase } from '@ask/persistence/testing';
import { connectTestRedis, removeKeysUnder, testKeyPrefix, testRedisUrl } from '@ask/testing';
import { SynthesisService } from '../synthesis/synthesis.service';
import { type SynthesisDeps, synthesisDeps } from '../synthesis/stages/turn';
import { SummaryProducer } from '../memory/summary.producer';
import { SummaryService } from '../memory/summary.service';

/** How conversation memory is wired into a service: off, summary jobs on a real BullMQ queue, or inline summaries too. */
export type HarnessMemory = 'off' | 'queue' | 'inline';

/** What a harness's services are built with; {@link SynthesisHarness.service} overrides any of it per service. */
export interface SynthesisServiceOptions {
  /** Settings on top of the harness's (strings, as in the environment); e.g. `{ ASK_DEADLINE_MS: '500' }`. */
  env?: Record<string, string>;
  /** Record every upstream call in `provider_calls` (the call ledger). Default false: no ledger rows. */
  ledger?: boolean;
  /**
   * `queue`: stored summaries are read into the plan and a summary job is enqueued after `done`;
   * `inline`: an extractive summary is written in the run ({@link SynthesisHarness.summaryService}).
   * Default `off` (trimming only).
   */
  memory?: HarnessMemory;
}

/** Options of {@link createSynthesisHarness}. */
export interface SynthesisHarnessOptions extends SynthesisServiceOptions {
  /** The spec's name, lowercase with dashes: the Redis key prefix is `<name>-<uuid>`. */
  name: string;
  /** The fake upstream's options; default `{ chunkDelayMs: 0 }`. */
  upstream?: FakeUpstreamOptions;
  /**
   * The credentials key (64 hex digits, also `ASK_ENCRYPTION_KEY`); without it projects cannot store
   * an API key (`setCredentials` throws).
   */
  encryptionKey?: string;
  /** How long an ask's events stay in Redis (seconds); default 120. */
  streamTtlSeconds?: number;
}

/** A built harness: the parts (for a spec to read and seed) and the service. */
export interface SynthesisHarness {
  prefix: string;
  db: TestDatabase;
  redis: Redis;
  upstream: FakeUpstream;
  events: AskEventStream;
  /** The config the default service runs with. */
  config: AppConfig;
  projects: ProjectsRepository;
  sessions: SessionsRepository;
  usage: UsageRepository;
  windows: LearnedWindowsRepository;
  calls: ProviderCallsRepository;
  summaries: SummariesRepository;
  /** The `ask-memory` queue under the prefix (created only when memory is `queue` or `inline`). */
  queue?: Queue;
  /** The summariser an `inline` service runs after `done` (the same one the `ask-memory` job runs). */
  summaryService: SummaryService;
  /** The service built with the harness's options. */
  synthesis: SynthesisService;
  /** Another service on the same database, Redis and upstream, with `overrides` over the harness's options. */
  service(overrides?: SynthesisServiceOptions): SynthesisService;
  /** The stages' dependencies (`synthesisDeps`) on the harness's parts, for a spec of one stage; `ledger` records calls. */
  deps(options?: { ledger?: boolean }): SynthesisDeps;
  /** Removes the keys under the prefix and the queue, stops the upstream, drops the database. */
  close(): Promise<void>;
}

/**
 * Builds a synthesis service with its database, Redis, fake upstream, repositories and config.
 * The config is the environment plus `DATABASE_URL` (the new database), `ASK_KEY_PREFIX`,
 * `ASK_PROVIDER_URL_ALLOWLIST` (the upstream), `LOCAL_LLM_CHUNK_DELAY_MS=0`, the encryption key when
 * given, then `env`.
 * @throws what the database, Redis or the upstream throw when they cannot start.
 */
export async function createSynthesisHarness(options: SynthesisHarnessOptions): Promise<SynthesisHarness> {
  const prefix = testKeyPrefix(options.name);
  const db = await createTestDatabase();
  const redis = connectTestRedis();
  const upstream = await startFakeUpstream(options.upstream ?? { chunkDelayMs: 0 });
  const events = new AskEventStream(redis, prefix, options.streamTtlSeconds ?? 120);
  const projects = new ProjectsRepository(db.dataSource, new CredentialsCipher(options.encryptionKey));
  const sessions = new SessionsRepository(db.dataSource);
  const usage = new UsageRepository(db.dataSource);
  const windows = new LearnedWindowsRepository(db.dataSource);
  const calls = new ProviderCallsRepository(db.dataSource);
  const summaries = new SummariesRepository(db.dataSource);
  const configOf = (env: Record<string, string> = {}): AppConfig =>
    loadConfig({
      ...process.env,
      DATABASE_URL: db.url,
      ASK_KEY_PREFIX: prefix,
      ASK_PROVIDER_URL_ALLOWLIST: upstream.url,
      LOCAL_LLM_CHUNK_DELAY_MS: '0',
      ...(options.encryptionKey ? { ASK_ENCRYPTION_KEY: options.encryptionKey } : {}),
      ...options.env,
      ...env,
    });
  const config = configOf();
  const queue =
    (options.memory ?? 'off') !== 'off'
      ? new Queue(QueueName.AskMemory, { connection: { url: testRedisUrl() }, prefix })
      : undefined;
  const summaryService = new SummaryService(projects, sessions, summaries, usage, windows, config, calls);
  const service = (overrides: SynthesisServiceOptions = {}): SynthesisService => {
    const ledger = overrides.ledger ?? options.ledger ?? false;
    const memory = overrides.memory ?? options.memory ?? 'off';
    if (memory !== 'off' && !queue)
      throw new Error('createSynthesisHarness: memory needs the harness built with memory');
    return new SynthesisService(
      projects,
      sessions,
      usage,
      events,
      overrides.env ? configOf(overrides.env) : config,
      windows,
      ledger ? calls : undefined,
      memory !== 'off' ? summaries : undefined,
      memory !== 'off' && queue ? new SummaryProducer(queue) : undefined,
      memory === 'inline' ? summaryService : undefined,
    );
  };
  return {
    prefix,
    db,
    redis,
    upstream,
    events,
    config,
    projects,
    sessions,
    usage,
    windows,
    calls,
    summaries,
    queue,
    summaryService,
    synthesis: service(),
    service,
    deps: ({ ledger = false } = {}) =>
      synthesisDeps({ projects, sessions, usage, windows, events, config, ...(ledger ? { calls } : {}) }),
    close: async () => {
      if (queue) {
        await queue.obliterate({ force: true });
        await queue.close();
      }
      await removeKeysUnder(redis, prefix);
      redis.disconnect();
      await upstream.close();
      await db.drop();
    },
  };
}
