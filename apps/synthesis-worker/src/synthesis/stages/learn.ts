import type { SizedPrompt } from '@ask/context-budget';
import { detectSilentTruncation } from '@ask/llm-providers';
import { modelMetricLabel } from '@ask/model-catalog';
import { countingErrorRatio, countingFaultsTotal } from '@ask/observability';
import type { Overflow, SynthesisDeps, Turn } from './turn';

/** Reported prompt tokens above our estimate by more than this factor are logged as a counting fault. */
export const COUNTING_FAULT_RATIO = 1.15;

/**
 * What an overflow teaches (the learn stage): a window smaller than the one planned against is
 * remembered for the project's model, and the disclosed prompt size is a calibration record
 * (per-script estimate only). OpenAI's per-minute "Request too large" is no overflow:
 * `classifyUpstreamError` makes it a fatal 429.
 */
export async function learnFromOverflow(
  deps: Pick<SynthesisDeps, 'memory'>,
  turn: Pick<Turn, 'data' | 'project' | 'model' | 'planning' | 'history'>,
  sized: SizedPrompt,
  overflow: Overflow,
): Promise<void> {
  await deps.memory.rememberWindow(turn.project.id, turn.model, sized.window, overflow.limit);
  if (overflow.promptTokens !== undefined) {
    await deps.memory.record(
      turn.project.id,
      turn.model.model,
      turn.planning,
      { sized, question: turn.data.question, history: turn.history },
      overflow.promptTokens,
      'overflow',
    );
  }
}

/**
 * The learn stage after an answer: compares the provider's reported prompt tokens with what we
 * planned. With the per-script estimate it records the floor estimate of what was sent and its script
 * class (calibration learns from it; a report far above is evidence of drift, kept). A report above
 * the plan by more than {@link COUNTING_FAULT_RATIO} is counted as a counting fault (logged with the
 * model id, counted in metrics); for Ollama a report far below is flagged as silent truncation.
 * @returns the `done` event's warning for a suspected silent truncation, else undefined.
 */
export async function checkReportedUsage(
  deps: Pick<SynthesisDeps, 'memory' | 'logger'>,
  turn: Pick<Turn, 'data' | 'project' | 'model' | 'planning' | 'history'>,
  sized: SizedPrompt,
  reported: number | null,
): Promise<string | undefined> {
  if (reported === null || reported <= 0) return undefined;
  const { model, planning } = turn;
  // The plan already counted what was sent (cached measures): no second pass over the prompt here.
  const planned = sized.plan.used;
  await deps.memory.record(
    turn.project.id,
    model.model,
    planning,
    { sized, question: turn.data.question, history: turn.history },
    reported,
    'usage',
  );
  if (planned > 0) countingErrorRatio.observe({ model: modelMetricLabel(model) }, reported / planned);
  if (reported > planned * COUNTING_FAULT_RATIO) {
    countingFaultsTotal.inc({ model: modelMetricLabel(model) });
    deps.logger.warn(
      `counting fault: model=${model.model} counter=${planning.counter.id} estimated=${planned} reported=${reported}`,
    );
  }
  if (model.provider === 'ollama' && detectSilentTruncation(planned, reported)) {
    deps.logger.warn(`silent truncation suspected: model=${model.model} sent=${planned} reported=${reported}`);
    return `the provider reported ${reported} prompt tokens for ${planned} sent: it may have truncated the prompt silently`;
  }
  return undefined;
}
