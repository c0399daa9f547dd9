import { Gauge } from 'prom-client';
import { localChatCpuMicros } from '@ask/llm-providers';
import { registry } from '@ask/observability';

/**
 * `ask_local_llm_cpu_seconds` on the worker's /metrics: CPU seconds this process spent in the local
 * stand-in LLM's own work (sentence selection, counting for its usage report), read at scrape time,
 * so a benchmark can tell the stand-in's cost from the pipeline's (bench/pipeline).
 */
export const localLlmCpuSeconds = new Gauge({
  name: 'ask_local_llm_cpu_seconds',
  help: 'CPU seconds spent in the local stand-in LLM (sentence selection and its usage counting) since start',
  registers: [registry],
  collect() {
    this.set(localChatCpuMicros() / 1e6);
  },
});
