import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The process's Prometheus registry (prom-client) with Node's default metrics and the Ask service's
 * own: asks by outcome, time to done, tokens planned and sent, trimming, and counter calibration.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry });

/** Asks finished, by outcome (`done` or the typed error code). */
export const asksTotal = new Counter({
  name: 'ask_finished_total',
  help: 'Asks finished, by outcome (done or the typed error code)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** Seconds from acceptance to the terminal event. */
export const askDurationSeconds = new Histogram({
  name: 'ask_duration_seconds',
  help: 'Seconds from acceptance to the terminal event',
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120],
  registers: [registry],
});

/** Prompt tokens planned per ask (our count of what is sent). */
export const promptTokensPlanned = new Histogram({
  name: 'ask_prompt_tokens_planned',
  help: 'Prompt tokens planned per ask (our count of what is sent)',
  labelNames: ['model'] as const,
  buckets: [256, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 1048576],
  registers: [registry],
});

/** Session turns dropped by trimming. */
export const turnsDroppedTotal = new Counter({
  name: 'ask_turns_dropped_total',
  help: 'Session turns dropped by trimming',
  labelNames: ['model'] as const,
  registers: [registry],
});

/** The calibration factor in force for an approximate counter, per model. */
export const calibrationFactor = new Gauge({
  name: 'ask_counter_calibration_factor',
  help: 'Calibration factor learned for the approximate counter, per model and script class',
  labelNames: ['model', 'script'] as const,
  registers: [registry],
});

/** Reported prompt tokens far above our estimate (a counting fault), per model. */
export const countingFaultsTotal = new Counter({
  name: 'ask_counting_faults_total',
  help: 'Provider-reported prompt tokens far above our estimate, per model',
  labelNames: ['model'] as const,
  registers: [registry],
});

/*
 * OpenTelemetry GenAI client metrics (semantic conventions, development status:
 * https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-metrics/), under the names the
 * OpenTelemetry → Prometheus translation gives them (dots become underscores, seconds get `_seconds`).
 * Labels are bounded: operation, provider and model come from project settings, the token type and
 * error type from fixed lists; never a session, ask or project id.
 */

/** Bucket bounds the GenAI convention recommends for token counts. */
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
/** Bucket bounds the GenAI convention recommends for durations, in seconds. */
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];

/**
 * `gen_ai.client.token.usage`: tokens per upstream call by `gen_ai_token_type`: `input` (cached
 * included) and `output` (reasoning included) as the convention names them, plus their subsets
 * `cache_read`, `cache_creation` and `reasoning` (the convention's usage attribute names).
 */
export const genAiTokenUsage = new Histogram({
  name: 'gen_ai_client_token_usage',
  help: 'Tokens per upstream call, by token type (input includes cache_read and cache_creation; output includes reasoning)',
  labelNames: ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'gen_ai_token_type'] as const,
  buckets: TOKEN_BUCKETS,
  registers: [registry],
});

/** `gen_ai.client.operation.duration`: seconds per upstream call; `error_type` is the typed code or empty. */
export const genAiOperationDuration = new Histogram({
  name: 'gen_ai_client_operation_duration_seconds',
  help: 'Seconds per upstream call (error_type: the typed error code, empty when the call answered)',
  labelNames: ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'error_type'] as const,
  buckets: DURATION_BUCKETS,
  registers: [registry],
});

/** `gen_ai.client.operation.time_to_first_chunk`: seconds from the request to the first streamed chunk. */
export const genAiTimeToFirstChunk = new Histogram({
  name: 'gen_ai_client_operation_time_to_first_chunk_seconds',
  help: 'Seconds from sending a streamed request to its first chunk',
  labelNames: ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model'] as const,
  buckets: DURATION_BUCKETS,
  registers: [registry],
});

/** Provider usage objects that could not be normalised (negative or inconsistent buckets), per provider. */
export const usageInconsistentTotal = new Counter({
  name: 'ask_usage_inconsistent_total',
  help: 'Provider usage objects refused as negative or inconsistent (logged with the raw object)',
  labelNames: ['gen_ai_provider_name'] as const,
  registers: [registry],
});

/** Share of the prompt's limit a plan used: planned prompt tokens ÷ (window − max_tokens − margin); at most 1. */
export const budgetFillRatio = new Histogram({
  name: 'ask_budget_fill_ratio',
  help: 'Planned prompt tokens (system prompt included) divided by the prompt limit: window minus max_tokens and margin',
  labelNames: ['model'] as const,
  buckets: [0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1],
  registers: [registry],
});

/** Counting error: the provider's reported prompt tokens ÷ our planned count (1 is exact). */
export const countingErrorRatio = new Histogram({
  name: 'ask_counting_error_ratio',
  help: 'Provider-reported prompt tokens divided by our planned count (1 is exact)',
  labelNames: ['model'] as const,
  buckets: [0.5, 0.8, 0.9, 0.95, 0.99, 1, 1.01, 1.05, 1.1, 1.15, 1.25, 1.5, 2],
  registers: [registry],
});

/** What {@link watchQueues} reads from a BullMQ `Queue` (structural, so this lib needs no BullMQ import). */
export interface WatchedQueue {
  readonly name: string;
  getJobCounts(...types: Array<(typeof QUEUE_STATES)[number]>): Promise<Record<string, number>>;
  getJobs(
    types: Array<'wait'>,
    start?: number,
    end?: number,
    asc?: boolean,
  ): Promise<Array<{ timestamp: number } | undefined>>;
}

const watched = new Set<WatchedQueue>();
/** The job states reported per queue. */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed'] as const;

/** Jobs per queue and state, read from Redis at scrape time. */
export const queueJobs = new Gauge({
  name: 'ask_queue_jobs',
  help: 'Jobs per queue and state (waiting, active, delayed, prioritized, failed), read at scrape time',
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    for (const queue of watched) {
      const counts = await queue.getJobCounts(...QUEUE_STATES);
      for (const state of QUEUE_STATES) this.set({ queue: queue.name, state }, counts[state] ?? 0);
    }
  },
});

/** Age of the oldest waiting job per queue (0 when none waits): the autoscaling signal per worker. */
export const queueOldestWaitingAge = new Gauge({
  name: 'ask_queue_oldest_waiting_age_seconds',
  help: 'Seconds the oldest waiting job of each queue has waited (0 when none waits), read at scrape time',
  labelNames: ['queue'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    const now = Date.now();
    for (const queue of watched) {
      const [oldest] = await queue.getJobs(['wait'], 0, 0, true);
      this.set({ queue: queue.name }, oldest ? Math.max(0, (now - oldest.timestamp) / 1000) : 0);
    }
  },
});

/** Reports these queues' depth and age on this process's `/metrics`. Returns the function that stops it. */
export function watchQueues(queues: readonly WatchedQueue[]): () => void {
  for (const q of queues) watched.add(q);
  return () => queues.forEach((q) => watched.delete(q));
}
