import { llmNotConfigured } from '@ask/ask-errors';
import { GoogleAuth, JWT } from 'google-auth-library';
import { missingCloudCredential } from '../cloud-credentials';
import { EgressRefusedError, findEgressRefusal } from '../egress/egress-policy';
import type { ProviderCredentials } from '../types';
import type { FetchLike } from '../wire/http';
import { CredentialSchemaError, parseServiceAccountJson, VERTEX_TOKEN_FIELD } from './vertex-credentials';

/** Returns a bearer for Vertex AI on each call (the library caches and refreshes it). */
export type TokenSource = () => Promise<string>;

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/**
 * Where google-auth-library's `JWT` (gtoken 7's fixed `GOOGLE_TOKEN_URL`) exchanges the assertion:
 * Google's OAuth 2.0 token endpoint under its www host. The only URL the transporter lets through.
 */
export const TOKEN_EXCHANGE_URL = 'https://www.googleapis.com/oauth2/v4/token';

/** How {@link vertexTokenSource} reaches Google and whether it may use the operator's identity. */
export interface VertexTokenOptions {
  /**
   * The HTTP client of the token exchange: the egress policy's checked fetch (`policy.fetch(field)`),
   * or a test's. It is only ever called with {@link TOKEN_EXCHANGE_URL}.
   */
  fetch: FetchLike;
  /**
   * The operator enabled ambient credentials for this project (`ASK_AMBIENT_CREDENTIALS_PROJECTS`):
   * with none stored, Application Default Credentials are used. Default false: a 412.
   */
  ambientCredentials?: boolean;
}

/**
 * The Vertex AI bearer, from the first of:
 *
 * 1. a configured access token (`gcpAccessToken`, used as is: it expires after about an hour);
 * 2. a service-account key (`gcpServiceAccountJson`), parsed again by {@link parseServiceAccountJson}
 *    (rows stored before the save-time check), from which only `client_email` and `private_key` are
 *    used: google-auth-library's `JWT` signs the assertion and exchanges it at {@link TOKEN_EXCHANGE_URL}
 *    through `options.fetch` (its transporter), so no request leaves outside the egress policy;
 * 3. only when the operator enabled it for the project (`options.ambientCredentials`), Application
 *    Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's ADC file, the metadata server:
 *    the operator's own identity and configuration), with the `cloud-platform` scope
 *    (https://cloud.google.com/docs/authentication/application-default-credentials).
 *
 * @throws AskError 412 `llm_not_configured` naming the field when the service-account JSON fails its
 *   schema (its text is never echoed), or when nothing is stored and ambient credentials are off.
 *   The token call itself rejects with the policy's EgressRefusedError (field
 *   `credentials.gcpServiceAccountJson`, classified as 403 `forbidden`) when the connection is refused,
 *   else with google-auth-library's error.
 */
export function vertexTokenSource(credentials: ProviderCredentials, options: VertexTokenOptions): TokenSource {
  if (credentials.gcpAccessToken) {
    const token = credentials.gcpAccessToken;
    return async () => token;
  }
  if (credentials.gcpServiceAccountJson) {
    let key: ReturnType<typeof parseServiceAccountJson>;
    try {
      key = parseServiceAccountJson(credentials.gcpServiceAccountJson);
    } catch (err) {
      if (err instanceof CredentialSchemaError) throw llmNotConfigured(`provider=vertex: ${err.message}`);
      throw err;
    }
    const client = new JWT({
      email: key.client_email,
      key: key.private_key,
      scopes: [SCOPE],
      // gtoken posts the assertion through this transporter; the guard keeps it to the one endpoint.
      transporterOptions: { fetchImplementation: tokenEndpointOnly(options.fetch) as never },
    });
    return async () => {
      let token: string | null | undefined;
      try {
        ({ token } = await client.getAccessToken());
      } catch (err) {
        // gaxios keeps the transport's error as `error`, not `cause`: surface the policy's refusal.
        throw findEgressRefusal(err) ?? findEgressRefusal((err as { error?: unknown }).error) ?? err;
      }
      if (!token) throw new Error('vertex: the token endpoint returned no access token');
      return token;
    };
  }
  if (!options.ambientCredentials)
    throw llmNotConfigured(`provider=vertex: ${missingCloudCredential('vertex', credentials)}`);
  const auth = new GoogleAuth({ scopes: SCOPE });
  return async () => {
    const token = await auth.getAccessToken();
    if (!token) throw new Error('vertex: Application Default Credentials returned no access token');
    return token;
  };
}

/** `fetch` that only ever calls Google's token endpoint (anything else is refused before a connection). */
function tokenEndpointOnly(fetchImpl: FetchLike): FetchLike {
  return ((input: Parameters<FetchLike>[0], init?: Parameters<FetchLike>[1]) => {
    // gaxios passes the URL as a string; a Request would carry it as `url`.
    const url =
      typeof input === 'object' && input !== null && 'url' in input && typeof input.url === 'string'
        ? input.url
        : String(input);
    if (url !== TOKEN_EXCHANGE_URL)
      return Promise.reject(new EgressRefusedError(VERTEX_TOKEN_FIELD, 'only the Google token endpoint may be called'));
    return fetchImpl(input, init);
  }) as FetchLike;
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
