import type { Request } from 'express';
import type { ApiKeysRepository } from '@ask/persistence';
import { BEARER } from './auth.guard';
import { principalOf } from './principal';

/**
 * For a request a project API key let in: a check that resolves false once that key no longer
 * verifies for its project (revoked with `DELETE …/keys/:keyId`, or the project deleted), for the
 * event routes to re-run every ASK_STREAM_KEY_RECHECK_MS while a stream is open. Undefined for the
 * admin key (an operator setting, not revocable through the API) and for an ask's capability token
 * (`?token=`, bound to the ask, not to a key).
 */
export function keyRecheck(request: Request, keys: ApiKeysRepository): (() => Promise<boolean>) | undefined {
  const principal = principalOf(request);
  if (principal.kind !== 'project') return undefined;
  const key = BEARER.exec(request.headers.authorization ?? '')?.[1];
  if (!key) return undefined;
  return async () => (await keys.verify(key)) === principal.projectId;
}
