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
