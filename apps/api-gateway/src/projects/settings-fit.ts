import { invalidRequest } from '@ask/ask-errors';
import { budgetShortfall, DEFAULT_MAX_TOKENS, DEFAULT_RESERVE } from '@ask/context-budget';
import type { LlmSettings } from '@ask/llm-providers';
import { resolveModel } from '@ask/model-catalog';
import { selectTokenCounter } from '@ask/token-counting';

/** The settings that decide whether a prompt can fit: the LLM settings and the project's `maxTokens`. */
export interface FitSettings {
  llm: LlmSettings | null | undefined;
  /** The project's `maxTokens` (used when `llm.maxTokens` is unset); undefined → the default 2048. */
  maxTokens: number | undefined;
}

/**
 * Refuses settings under which no ask could ever be answered: `max_tokens` (`llm.maxTokens`, else the
 * project's `maxTokens`, else 2048) plus the 600-token reserve plus the safety margin (5% of the window
 * with an exact counter, 15% with the approximate one) must leave at least one token of the effective
 * window (the catalog's, `llm.contextWindow`, capped by `llm.maxContextTokens`; model-catalog
 * `resolveModel`). No LLM settings: nothing to check.
 *
 * @throws AskError 400 `invalid_request` whose `details` names the fields and gives the figures, e.g.
 *   `llm.maxTokens, llm.contextWindow: maxTokens=2048 + reserve=600 + margin=154 leave available=-1778
 *   of window=1024 (model=mystery; window from llm.contextWindow); at least 1 token must be left`.
 */
export function assertSettingsFit({ llm, maxTokens }: FitSettings): void {
  if (!llm) return;
  const ref = { provider: llm.provider, model: llm.model, baseUrl: llm.baseUrl };
  const model = resolveModel(ref, { contextWindow: llm.contextWindow, maxContextTokens: llm.maxContextTokens });
  const exact = selectTokenCounter(ref, model.tokenizer).exactPlan;
  const effectiveMaxTokens = llm.maxTokens ?? maxTokens ?? DEFAULT_MAX_TOKENS;
  const shortfall = budgetShortfall({
    window: model.window,
    maxTokens: effectiveMaxTokens,
    reserve: DEFAULT_RESERVE,
    exact,
  });
  if (!shortfall) return;
  const maxTokensField =
    llm.maxTokens !== undefined ? 'llm.maxTokens' : maxTokens !== undefined ? 'maxTokens' : 'maxTokens (default 2048)';
  const capped =
    llm.maxContextTokens !== undefined &&
    llm.maxContextTokens === model.window &&
    model.window < (llm.contextWindow ?? model.catalogWindow);
  const windowField = capped
    ? 'llm.maxContextTokens'
    : llm.contextWindow !== undefined
      ? 'llm.contextWindow'
      : 'llm.model (catalog window)';
  const { window, reserve, margin, available } = shortfall;
  throw invalidRequest(
    `${maxTokensField}, ${windowField}: maxTokens=${effectiveMaxTokens} + reserve=${reserve} + margin=${margin} leave ` +
      `available=${available} of window=${window} (model=${llm.model.replace(/\s+/g, '_')}; window from ${windowField}); ` +
      'at least 1 token must be left for the question',
  );
}
