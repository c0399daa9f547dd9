import { forbidden, invalidRequest } from '@ask/ask-errors';
import { type EgressPolicy, EgressRefusedError, type EmbeddingSettings, type LlmSettings } from '@ask/llm-providers';
import type { Project } from '@ask/persistence';
import type { Principal } from '../auth/principal';
import type { ProjectSettingsDto } from './project.dto';

type Settings = Pick<LlmSettings, 'provider' | 'baseUrl'> | Pick<EmbeddingSettings, 'provider' | 'baseUrl'>;

/** One settings block of a body beside what is stored, with the name of its `baseUrl` field. */
interface EndpointChange {
  field: 'llm.baseUrl' | 'embedding.baseUrl';
  next: Settings | null | undefined;
  stored: Settings | null | undefined;
}

function changes(body: ProjectSettingsDto, stored: Project | null): EndpointChange[] {
  return [
    { field: 'llm.baseUrl', next: body.llm, stored: stored?.llmSettings },
    { field: 'embedding.baseUrl', next: body.embedding, stored: stored?.embeddingSettings },
  ];
}

/**
 * Save-time check of the provider endpoints in a create or update body (the same policy checks every
 * connection again after DNS):
 *
 * - a `baseUrl` that is not http(s), carries user-info or a fragment, or is (or resolves to) a
 *   loopback, private, link-local, unique-local, CGNAT or metadata address, or a local name, and is
 *   not in `ASK_PROVIDER_URL_ALLOWLIST` → 400 `invalid_request` naming the field;
 * - a PROJECT key that sets or changes a `baseUrl` to one outside the allow-list → 403 `forbidden`
 *   naming the field (only the admin key may choose other endpoints). Sending the stored value again
 *   is no change.
 *
 * @throws AskError 400 / 403 as above.
 */
export async function assertEndpointsAllowed(
  body: ProjectSettingsDto,
  stored: Project | null,
  principal: Principal,
  policy: EgressPolicy,
): Promise<void> {
  for (const { field, next, stored: before } of changes(body, stored)) {
    const url = next?.baseUrl;
    if (url === undefined || url === '') continue;
    if (url === before?.baseUrl && principal.kind !== 'admin') continue;
    try {
      policy.checkUrl(url, field);
      if (principal.kind !== 'admin' && !policy.isAllowListed(url)) {
        throw forbidden(
          `${field}: only the admin key may set a provider endpoint outside the operator's allow-list (ASK_PROVIDER_URL_ALLOWLIST)`,
        );
      }
      await policy.checkResolved(url, field);
    } catch (err) {
      if (err instanceof EgressRefusedError) throw invalidRequest(err.message);
      throw err;
    }
  }
}

/** Where a settings block sends its calls: the `baseUrl`'s origin, else the provider's own endpoint. */
function endpointOf(settings: Settings | null | undefined): string | null {
  if (!settings) return null;
  if (settings.baseUrl) {
    try {
      return new URL(settings.baseUrl).origin;
    } catch {
      return settings.baseUrl;
    }
  }
  return `default:${settings.provider}`;
}

/**
 * True when the body moves a provider's calls to another host (another `baseUrl` origin, or another
 * provider's default endpoint) while credentials are stored: they were given for the old host, so they
 * are dropped unless new ones come in the same request.
 */
export function dropsCredentials(body: ProjectSettingsDto, stored: Project): boolean {
  if (!stored.hasCredentials || body.credentials) return false;
  return changes(body, stored).some(
    ({ next, stored: before }) =>
      next !== undefined && next !== null && before && endpointOf(next) !== endpointOf(before),
  );
}
