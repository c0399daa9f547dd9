import type { HeaderBag } from './upstream-errors';

/** Reads one header, case-insensitively, from fetch `Headers` or a plain record. */
export function readHeader(headers: HeaderBag | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') {
    return (headers as Headers).get(name) ?? undefined;
  }
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (key.toLowerCase() === wanted) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

/**
 * The wait a provider asked for, in milliseconds, or undefined when it asked for none.
 *
 * `retry-after-ms` (OpenAI, Azure OpenAI: milliseconds) wins over `retry-after` (RFC 9110 §10.2.3:
 * delay-seconds or an HTTP-date). A date in the past gives 0. Unparseable values are ignored.
 * `now` is the clock in epoch milliseconds (injected so tests need no timers).
 */
export function parseRetryAfter(headers: HeaderBag | undefined, now: number = Date.now()): number | undefined {
  const ms = readHeader(headers, 'retry-after-ms');
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.round(Number(ms));
  const value = readHeader(headers, 'retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
