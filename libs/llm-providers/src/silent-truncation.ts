/** The details of `silentTruncationVerdict`. All counts are tokens. */
export interface SilentTruncationVerdict {
  /** True when the provider evaluated far fewer prompt tokens than we sent. */
  truncated: boolean;
  /** reported / sent, rounded to 3 decimals (1 when nothing was sent). */
  ratio: number;
  /** sent − reported, never negative. */
  missingTokens: number;
}

/**
 * Below this share of the tokens we sent, a reported prompt count means the prompt was cut. Ollama's
 * context shift keeps about half the context (`num_ctx − (num_ctx − num_keep) / 2`, ollama
 * `llm/server.go`), and our approximate counter can over-count by up to its 15% margin, so 0.75 sits
 * well clear of both: an honest count never falls that low, a shifted prompt always does.
 */
export const SILENT_TRUNCATION_RATIO = 0.75;

/** Gaps smaller than this many tokens are never flagged (tiny prompts, template rounding). */
export const SILENT_TRUNCATION_MIN_GAP = 32;

/**
 * The figures behind `detectSilentTruncation`: whether it flags, the reported/sent ratio and the
 * missing tokens, for the log line and the event.
 *
 * @param sentTokens our count of the prompt we sent (the planner's count, tokens).
 * @param reportedPromptTokens the provider's prompt count (`usage.promptTokens`); null → not flagged.
 */
export function silentTruncationVerdict(
  sentTokens: number,
  reportedPromptTokens: number | null,
): SilentTruncationVerdict {
  if (reportedPromptTokens === null || sentTokens <= 0) {
    return { truncated: false, ratio: 1, missingTokens: 0 };
  }
  const missingTokens = Math.max(0, sentTokens - reportedPromptTokens);
  const ratio = Math.round((reportedPromptTokens / sentTokens) * 1000) / 1000;
  const truncated =
    reportedPromptTokens < SILENT_TRUNCATION_RATIO * sentTokens && missingTokens >= SILENT_TRUNCATION_MIN_GAP;
  return { truncated, ratio, missingTokens };
}

/**
 * True when the provider evaluated far fewer prompt tokens than we sent: Ollama reports
 * `prompt_eval_count` after it has silently cut an oversize prompt (when `truncate`/`shift` are not
 * disabled, or on servers older than the `truncate` field). Flags when `reported < 0.75 · sent` AND
 * `sent − reported ≥ 32` (see `SILENT_TRUNCATION_RATIO`). The answer should then be flagged (event and
 * log), not passed off as normal.
 *
 * Caveat: a server that reports only the uncached part of the prompt (KV-cache reuse across turns)
 * would also read low; Ollama reports the whole prompt.
 *
 * @param sentTokens our count of the prompt we sent (tokens).
 * @param reportedPromptTokens the provider's prompt count; null → false.
 */
export function detectSilentTruncation(sentTokens: number, reportedPromptTokens: number | null): boolean {
  return silentTruncationVerdict(sentTokens, reportedPromptTokens).truncated;
}
