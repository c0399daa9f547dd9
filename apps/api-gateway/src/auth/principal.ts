import type { Request } from 'express';

/**
 * Who the auth guard let in: the admin, a project (by one of its API keys), or the holder of one
 * ask's events capability token.
 */
export type Principal =
  | { kind: 'admin' }
  /** `keyId`: the API key's row id, so an ask can remember which key accepted it (revocation ends its streams). */
  | { kind: 'project'; projectId: string; keyId: string }
  | { kind: 'ask-token'; askId: string };

/** The request with the principal the guard attached. */
export type AuthenticatedRequest = Request & { principal?: Principal };

/** The principal of a request that passed the guard. @throws Error when the guard did not run (a wiring bug). */
export function principalOf(request: Request): Principal {
  const principal = (request as AuthenticatedRequest).principal;
  if (!principal) throw new Error('no principal on the request: the auth guard did not run');
  return principal;
}

/** Whether the principal may see resources of `projectId` (the admin sees every project). */
export function canSeeProject(principal: Principal, projectId: string): boolean {
  return principal.kind === 'admin' || (principal.kind === 'project' && principal.projectId === projectId);
}
