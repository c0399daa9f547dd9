/**
 * How a project's earlier turns are carried when they no longer fit verbatim:
 * - `off`: seed 000 trimming only (whole pairs newest → oldest, the rest dropped);
 * - `per-turn`: after the verbatim pairs, older pairs ride as their stored short summaries;
 * - `compaction`: as `per-turn`, and when pairs would still be dropped, one session summary stands
 *   for every pair up to its `covers_up_to`.
 */
export type MemoryMode = 'off' | 'per-turn' | 'compaction';

/** Modes in the order the API lists them. */
export const MEMORY_MODES: readonly MemoryMode[] = ['off', 'per-turn', 'compaction'];

/**
 * The default mode: `per-turn`. Every question stays represented (verbatim or as its own summary),
 * each summary is written once from the original pair (no summary of a summary, so nothing drifts),
 * and its cost is one bounded summariser call per answer. `compaction` adds a session summary that
 * is rewritten as the session grows: worth it for long sessions, opt-in (docs/ARCHITECTURE.md).
 */
export const DEFAULT_MEMORY_MODE: MemoryMode = 'per-turn';

/** Default length budget of one pair's summary, in tokens of the planning counter. */
export const DEFAULT_SUMMARY_MAX_TOKENS = 96;

/** The session summary may use this many times the per-pair length budget (tokens). */
export const SESSION_SUMMARY_FACTOR = 6;

/** The built-in extractive summariser's model id (no provider call; the local stand-in always uses it). */
export const EXTRACTIVE_SUMMARISER = 'extractive';

/** A project's memory settings (`projects.memory_settings`; every field optional). */
export interface MemorySettings {
  /** Default {@link DEFAULT_MEMORY_MODE}. */
  mode?: MemoryMode;
  /**
   * Model that writes the summaries, served by the project's LLM provider; default the project's
   * model. `extractive` selects the built-in extractive summariser (no provider call).
   */
  summaryModel?: string;
  /** Length budget of one pair's summary, in tokens; default {@link DEFAULT_SUMMARY_MAX_TOKENS}. */
  summaryMaxTokens?: number;
}

/** The settings with every default filled in (`summaryModel` null: the project's model). */
export function effectiveMemory(settings: MemorySettings | null | undefined): {
  mode: MemoryMode;
  summaryModel: string | null;
  summaryMaxTokens: number;
} {
  return {
    mode: settings?.mode ?? DEFAULT_MEMORY_MODE,
    summaryModel: settings?.summaryModel ?? null,
    summaryMaxTokens: settings?.summaryMaxTokens ?? DEFAULT_SUMMARY_MAX_TOKENS,
  };
}
