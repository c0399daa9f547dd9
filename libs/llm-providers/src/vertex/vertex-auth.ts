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

/** Vertex AI's REST host for a location: `https://{region}-aiplatform.googleapis.com`, or the global host. */
export function vertexHost(region: string): string {
  return region === 'global' ? 'https://aiplatform.googleapis.com' : `https://${region}-aiplatform.googleapis.com`;
}

/** `{base}/v1/projects/{project}/locations/{region}` */
export function vertexLocationPath(base: string, project: string, region: string): string {
  return `${base.replace(/\/+$/, '')}/v1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(region)}`;
}
