import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * True when `/metrics` may be served for this `Authorization` header value: always when `token` is
 * unset (the operator left `/metrics` open, ASK_METRICS_TOKEN), otherwise only for exactly
 * `Bearer <token>`. The comparison runs in constant time over SHA-256 digests, so neither the
 * token's characters nor its length leak through the answer's timing.
 */
export function metricsAuthorized(authorization: string | undefined, token: string | undefined): boolean {
  if (token === undefined) return true;
  const match = /^Bearer (.+)$/.exec(authorization ?? '');
  if (!match) return false;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(match[1]), digest(token));
}
