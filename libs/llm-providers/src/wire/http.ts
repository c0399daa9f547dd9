import type { ProviderId } from '@ask/model-catalog';
import { UpstreamHttpError } from '../errors/upstream-errors';

/** The `fetch` adapters use; injectable for tests. */
export type FetchLike = typeof fetch;

/**
 * POSTs JSON and returns the response when it is 2xx.
 * @throws UpstreamHttpError with the status, headers and raw body otherwise (the body is never logged).
 * @throws the fetch error (AbortError, TypeError "fetch failed") when the request does not complete.
 */
export async function postJson(
  fetchImpl: FetchLike,
  provider: ProviderId,
  url: string,
  body: unknown,
  headers: Record<string, string>,
  signal?: AbortSignal,
): Promise<Response> {
  const response = await fetchImpl(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) {
    const text = await response.text().catch(() => '');
    throw new UpstreamHttpError(provider, response.status, text, response.headers);
  }
  return response;
}

/** Removes trailing slashes from a base URL. */
export function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
