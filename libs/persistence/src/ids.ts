const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether `value` is a UUID in canonical text form. Row ids are UUIDs, so a lookup by anything else
 * short-circuits to "not found" instead of a PostgreSQL cast error.
 */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
