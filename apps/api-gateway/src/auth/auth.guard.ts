import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { createHash, timingSafeEqual } from 'node:crypto';
import { invalidRequest, notFound, registerSecrets, unauthorized } from '@ask/ask-errors';
import { APP_CONFIG, type AppConfig } from '@ask/config';
import { ApiKeysRepository, isUuid } from '@ask/persistence';
import { type Access, ACCESS_METADATA } from './access.decorators';
import { EventsTokenSigner } from './events-token';
import type { AuthenticatedRequest, Principal } from './principal';

/** `Authorization: Bearer <key>` as the guard accepts it; group 1 is the key. */
export const BEARER = /^Bearer ([\x21-\x7e]{1,512})$/i;

/**
 * The global authentication guard (`Authorization: Bearer <key>`).
 *
 * - The admin key (ASK_ADMIN_KEY; compared in constant time) may call every route. With no admin key
 *   configured, admin routes answer 401 to everyone.
 * - A project API key (`ApiKeysRepository.verify`) may call only its own project's routes; any other
 *   project id in the path is a 404, exactly as if the project did not exist.
 * - Admin-only routes called with a project key: 401 `unauthorized` (details `admin key required`).
 * - The events route also takes the ask's capability token in `?token=` (see {@link EventsTokenSigner}).
 * - No, malformed, unknown or revoked key: 401 `unauthorized`. The key is never echoed or logged.
 *
 * The principal is attached to the request for the routes that check ownership themselves (events).
 */
@Injectable()
export class AuthGuard implements CanActivate {
  private readonly adminKeyHash: Buffer | null;

  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ApiKeysRepository,
    private readonly tokens: EventsTokenSigner,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.adminKeyHash = config.ASK_ADMIN_KEY ? sha256(config.ASK_ADMIN_KEY) : null;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return true;
    const access =
      this.reflector.getAllAndOverride<Access>(ACCESS_METADATA, [context.getHandler(), context.getClass()]) ??
      'project';
    if (access === 'public') return true;
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();

    if (access === 'ask-events' && request.query['token'] !== undefined) {
      request.principal = this.fromEventsToken(request);
      return true;
    }
    const principal = await this.authenticate(request.headers.authorization);
    request.principal = principal;
    if (access === 'admin' && principal.kind !== 'admin') throw unauthorized('admin key required');
    if (access === 'project' && principal.kind === 'project') {
      const projectId = param(request, 'projectId');
      if (projectId !== undefined && projectId !== principal.projectId) {
        if (!isUuid(projectId)) throw invalidRequest('projectId: must be a UUID');
        throw notFound('project not found');
      }
    }
    return true;
  }

  /** @throws AskError 401 for a missing, malformed, unknown or revoked key. */
  private async authenticate(header: string | undefined): Promise<Principal> {
    if (!header) throw unauthorized('missing Authorization: Bearer <key>');
    const match = BEARER.exec(header);
    if (!match) throw unauthorized('malformed Authorization header, expected Bearer <key>');
    const key = match[1];
    if (this.adminKeyHash && timingSafeEqual(sha256(key), this.adminKeyHash)) return { kind: 'admin' };
    const verified = await this.keys.verifyKey(key);
    if (!verified) throw unauthorized('unknown or revoked key');
    // The presented key (and its secret part) is redacted from whatever this process writes out.
    registerSecrets([key, key.split('_').slice(2).join('_')]);
    return { kind: 'project', projectId: verified.projectId, keyId: verified.keyId };
  }

  /** @throws AskError 400 for a malformed token parameter, 401 for a token of another ask. */
  private fromEventsToken(request: AuthenticatedRequest): Principal {
    const token = request.query['token'];
    const askId = param(request, 'askId');
    if (typeof token !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(token))
      throw invalidRequest('token (query): must be the 43-character token of eventsUrl, given once');
    if (!askId || !isUuid(askId)) throw invalidRequest('askId: must be a UUID');
    if (!this.tokens.verify(askId, token)) throw unauthorized('invalid events token');
    return { kind: 'ask-token', askId };
  }
}

/** A path parameter as a string (Express 5 types allow arrays for wildcard parameters). */
function param(request: AuthenticatedRequest, name: string): string | undefined {
  const value: unknown = request.params[name];
  return typeof value === 'string' ? value : undefined;
}

/** Hashing both sides first gives equal lengths, so the compare is constant-time whatever is sent. */
function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
