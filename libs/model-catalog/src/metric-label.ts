import { MODEL_CATALOG } from './catalog';
import { normalizeModelId } from './resolve-model';

/** The one label value that stands for every model the catalog does not know. */
export const OTHER_MODEL_LABEL = 'other';

/**
 * The value a Prometheus label carries for a model: the catalog row's `family` id (`claude-4`,
 * `gpt-4o`, `ollama-llama-3.x`, `local` for the embedded stand-in), or {@link OTHER_MODEL_LABEL} when
 * no row of `ref.provider` matches. A model id is chosen by a tenant (a fine-tune's name can carry a
 * customer's or a project's name) and unbounded, so it never becomes a label value itself: the label
 * set stays the catalog's rows plus one, whatever the tenants set (no tenant grows the metric store). `provider` is a
 * string so embedding providers (`local-semantic`) fold too; one the catalog does not serve gives `other`.
 */
export function modelMetricLabel(ref: { provider: string; model: string }): string {
  const id = normalizeModelId(ref.model);
  const entry = MODEL_CATALOG.find(
    (row) => (row.providers as readonly string[]).includes(ref.provider) && row.patterns.some((re) => re.test(id)),
  );
  return entry?.family ?? OTHER_MODEL_LABEL;
}
