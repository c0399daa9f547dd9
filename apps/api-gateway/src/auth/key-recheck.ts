import type { Request } from 'express';
import type { ApiKeysRepository } from '@ask/persistence';
import { BEARER } from './auth.guard';
import { principalOf } from './principal';

/**
 * For a stream a project API key opened: a check that resolves false once that key no longer
 * verifies for its project (revoked with `DELETE …/keys/:keyId`, or the project deleted), for the
 * event routes to re-run every ASK_STREAM_KEY_RECHECK_MS while a stream is open. For a stream opened
 * with an ask's capability token (`?token=`): the same check on the key that accepted the ask
 * (`acceptedBy`, the ask meta's `keyId`), so revoking a key also ends the token streams of its asks.
 * Undefined for the admin key (an operator setting, not revocable through the API) and for a token
 * of an ask the admin accepted.
 */
export function keyRecheck(
  request: Request,
  keys: ApiKeysRepository,
  acceptedBy?: string,
): (() => Promise<boolean>) | undefined {
  const principal = principalOf(request);
  if (principal.kind === 'ask-token') return acceptedBy ? () => keys.isActive(acceptedBy) : undefined;
  if (principal.kind !== 'project') return undefined;
  const key = BEARER.exec(request.headers.authorization ?? '')?.[1];
  if (!key) return undefined;
  return async () => (await keys.verify(key)) === principal.projectId;
}
