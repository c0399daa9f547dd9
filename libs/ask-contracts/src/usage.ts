/**
 * Token sums and cost of a set of upstream calls (`provider_calls` rows), as the usage routes answer
 * them (`GET …/usage`, `GET …/sessions/:sessionId/usage`). Tokens follow the OpenTelemetry GenAI
 * convention (input includes cache reads and writes, output includes reasoning). Costs are exact
 * decimal strings (USD, 12 places).
 */
export interface UsageTotals {
  calls: number;
  inputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  costUsd: string;
  /** Calls without a cost (no price for the model, or no usable usage): their tokens count, their cost does not. */
  unpricedCalls: number;
}
