import { llmNotConfigured } from '@ask/ask-errors';
import { GoogleAuth } from 'google-auth-library';
import type { ProviderCredentials } from '../types';

/** Returns a bearer for Vertex AI on each call (the library caches and refreshes it). */
export type TokenSource = () => Promise<string>;

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/**
 * The Vertex AI bearer, from the first of: a configured access token (`gcpAccessToken`, used as is:
 * it expires after about an hour), a service-account key (`gcpServiceAccountJson`), or Application
 * Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's ADC file, the metadata server), with
 * the `cloud-platform` scope (https://cloud.google.com/docs/authentication/application-default-credentials).
 *
 * @throws AskError 412 `llm_not_configured` when the service-account JSON does not parse (its text is
 *   never echoed); the token call itself rejects with google-auth-library's error when ADC finds nothing.
 */
export function vertexTokenSource(credentials: ProviderCredentials): TokenSource {
  if (credentials.gcpAccessToken) {
    const token = credentials.gcpAccessToken;
    return async () => token;
  }
  let auth: GoogleAuth;
  if (credentials.gcpServiceAccountJson) {
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(credentials.gcpServiceAccountJson) as Record<string, unknown>;
    } catch {
      throw llmNotConfigured('provider=vertex: gcpServiceAccountJson is not valid JSON');
    }
    auth = new GoogleAuth({ credentials: parsed, scopes: SCOPE });
  } else {
    auth = new GoogleAuth({ scopes: SCOPE });
  }
  return async () => {
    const token = await auth.getAccessToken();
    if (!token) throw new Error('vertex: Application Default Credentials returned no access token');
    return token;
  };
}

/** A Vertex location id (`us-central1`, `europe-west4`, `global`): one DNS label, letters, digits, inner hyphens. */
const LOCATION_ID = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * The project's Vertex location: `region`, default `us-central1`. It is spliced into the host name
 * (see {@link vertexHost}), so anything but one DNS label is refused: `attacker.example/x?` would
 * otherwise send the bearer (the project's token, or the service's ADC) to `attacker.example`, past
 * the `baseUrl` checks.
 *
 * @throws AskError 412 `llm_not_configured` when `region` is not a location id.
 */
export function vertexLocation(region: string | undefined): string {
  const location = region ?? 'us-central1';
  if (!LOCATION_ID.test(location)) {
    throw llmNotConfigured(
      'provider=vertex: region must be a location id like us-central1 (letters, digits and inner hyphens)',
    );
  }
  return location;
}

/**
 * Vertex AI's REST host for a location: `https://{region}-aiplatform.googleapis.com`, or the global host.
 * @throws AskError 412 `llm_not_configured` when `region` is not a location id ({@link vertexLocation}).
 */
export function vertexHost(region: string): string {
  const location = vertexLocation(region);
  return location === 'global' ? 'https://aiplatform.googleapis.com' : `https://${location}-aiplatform.googleapis.com`;
}

/** `{base}/v1/projects/{project}/locations/{region}` */
export function vertexLocationPath(base: string, project: string, region: string): string {
  return `${base.replace(/\/+$/, '')}/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(region)}`;
}
