import { invalidRequest } from '@ask/ask-errors';

/**
 * Invisible format characters a source id may not hold: zero-width space, non-joiner and joiner
 * (U+200B–U+200D), word joiner (U+2060), BOM (U+FEFF), and the bidirectional controls (U+200E/F
 * marks, U+202A–U+202E embeddings and overrides, U+2066–U+2069 isolates). Each makes an id that
 * displays like another one but is stored apart: a confusable source.
 */
const INVISIBLE = /[\u200B-\u200F\u202A-\u202E\u2060\u2066-\u2069\uFEFF]/;

/**
 * A source id (a document's `uri`, an insight's or recommendation's `id`) in the one form it is
 * stored under: Unicode NFC, so the NFC and NFD spellings of `café` are one id (re-sending either
 * replaces the same source). An id holding an invisible format or bidi control is refused, not
 * stripped: the sender learns its id is not what it displays.
 * @param field the body path named in the error, e.g. `documents[3].uri`.
 * @throws AskError 400 `invalid_request` naming the field and the character's code point.
 */
export function normalizeSourceId(field: string, id: string): string {
  const bad = INVISIBLE.exec(id);
  if (bad) {
    const point = (bad[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
    throw invalidRequest(`${field}: must not contain invisible or bidirectional control characters (U+${point})`);
  }
  return id.normalize('NFC');
}

/**
 * Refuses a request that names one source twice (after {@link normalizeSourceId}): the second
 * would silently replace the first (documents) or make the batch's upsert touch a row twice
 * (insights, recommendations: PostgreSQL refuses `ON CONFLICT DO UPDATE` on one row twice).
 * @param field the array's body path, e.g. `insights`; @param key the id's field name, e.g. `id`.
 * @throws AskError 400 `invalid_request`: `insights[4].id: duplicate of insights[1].id ("a")`.
 */
export function refuseDuplicateIds(field: string, key: string, ids: readonly string[]): void {
  const first = new Map<string, number>();
  ids.forEach((id, i) => {
    const seen = first.get(id);
    if (seen !== undefined) {
      const shown = JSON.stringify(id.length > 80 ? `${id.slice(0, 80)}…` : id);
      throw invalidRequest(`${field}[${i}].${key}: duplicate of ${field}[${seen}].${key} (${shown})`);
    }
    first.set(id, i);
  });
}

/** The ids of `items` normalised ({@link normalizeSourceId}) and checked for duplicates ({@link refuseDuplicateIds}). */
export function sourceIds<T>(field: string, key: string, items: readonly T[], idOf: (item: T) => string): string[] {
  const ids = items.map((item, i) => normalizeSourceId(`${field}[${i}].${key}`, idOf(item)));
  refuseDuplicateIds(field, key, ids);
  return ids;
}
