import { z } from 'zod';

/** Google's OAuth 2.0 token endpoint: the only address a Vertex credential leads to (gtoken's fixed `GOOGLE_TOKEN_URL`). */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/**
 * The fields of a service-account key file as the Cloud console downloads it
 * (https://cloud.google.com/iam/docs/keys-create-delete), and nothing else. Only `client_email` and
 * `private_key` are used (the JWT assertion is signed with the key and exchanged at
 * {@link GOOGLE_TOKEN_URL}); the address fields a downloaded file carries are accepted only with
 * Google's own values, so a stored key can never name another address or a file.
 */
const serviceAccountKey = z.strictObject({
  type: z.literal('service_account'),
  client_email: z
    .string()
    .max(320)
    .regex(
      /^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+$/,
      'must be the service account e-mail (name@project.iam.gserviceaccount.com)',
    ),
  private_key: z
    .string()
    .max(16_000)
    .regex(
      /^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\r\n]+-----END PRIVATE KEY-----\n?$/,
      'must be a PEM PKCS#8 private key',
    ),
  private_key_id: z
    .string()
    .regex(/^[0-9a-f]{1,128}$/, 'must be hexadecimal')
    .optional(),
  project_id: z
    .string()
    .regex(/^[a-z0-9:.-]{1,128}$/, 'must be a Google Cloud project id')
    .optional(),
  client_id: z
    .string()
    .regex(/^[0-9]{1,64}$/, 'must be digits')
    .optional(),
  auth_uri: z.literal('https://accounts.google.com/o/oauth2/auth').optional(),
  token_uri: z.literal(GOOGLE_TOKEN_URL).optional(),
  auth_provider_x509_cert_url: z.literal('https://www.googleapis.com/oauth2/v1/certs').optional(),
  client_x509_cert_url: z
    .string()
    .regex(
      /^https:\/\/www\.googleapis\.com\/robot\/v1\/metadata\/x509\/[A-Za-z0-9._%+-]+$/,
      "must be Google's certificate URL for the account",
    )
    .optional(),
  universe_domain: z.literal('googleapis.com').optional(),
});

/** A service-account key that passed {@link parseServiceAccountJson}. */
export type ServiceAccountKey = z.infer<typeof serviceAccountKey>;

/** Credential types google-auth-library would honour, each of which names an address, a file or a program. */
const REFUSED_TYPES = new Set([
  'external_account',
  'external_account_authorized_user',
  'authorized_user',
  'impersonated_service_account',
  'gdch_service_account',
]);

/**
 * A credential that failed its schema: `field` names the offending part
 * (`credentials.gcpServiceAccountJson.type`), `reason` says why without echoing the value.
 */
export class CredentialSchemaError extends Error {
  override readonly name = 'CredentialSchemaError';

  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}

const FIELD = 'credentials.gcpServiceAccountJson';

/** The setting a refused Vertex token exchange (the fixed {@link GOOGLE_TOKEN_URL}) is reported against. */
export const VERTEX_TOKEN_FIELD = FIELD;

/**
 * Parses `gcpServiceAccountJson` strictly: JSON of one object with `type: "service_account"`,
 * `client_email` and `private_key`, optionally the other fields of a downloaded key file with
 * Google's own values (`token_uri` exactly {@link GOOGLE_TOKEN_URL}). `external_account`
 * (`credential_source.file` / `.url`, `token_url`, `service_account_impersonation_url`),
 * `authorized_user`, `external_account_authorized_user`, `impersonated_service_account` and any
 * unknown field are refused: google-auth-library would read the file or call the address with its own
 * HTTP client. Used at save (the gateway, 400) and again before each use (the workers, 412).
 *
 * @throws CredentialSchemaError naming `credentials.gcpServiceAccountJson[.<key>]`; the value is never echoed.
 */
export function parseServiceAccountJson(text: string): ServiceAccountKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new CredentialSchemaError(FIELD, 'not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new CredentialSchemaError(FIELD, 'must be a JSON object (a service-account key file)');
  const type = (parsed as { type?: unknown }).type;
  if (typeof type === 'string' && REFUSED_TYPES.has(type))
    throw new CredentialSchemaError(
      `${FIELD}.type`,
      `"${type}" is not accepted: only a "service_account" key (client_email and private_key) is, because other credential types name files or addresses`,
    );
  const result = serviceAccountKey.safeParse(parsed);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue.code === 'unrecognized_keys') {
    // Only the key names (never values), and only plain ones: a key is data the caller sent.
    const keys = issue.keys.map((k) => (/^[A-Za-z0-9_]{1,64}$/.test(k) ? k : '(a key)'));
    throw new CredentialSchemaError(
      `${FIELD}.${keys[0]}`,
      'not a field of a service-account key (only type, client_email, private_key and the other fields of a downloaded key file are accepted)',
    );
  }
  const path = issue.path.map(String).join('.');
  const field = path ? `${FIELD}.${path}` : FIELD;
  if (issue.code === 'invalid_value' && path === 'type')
    throw new CredentialSchemaError(field, 'must be "service_account"');
  if (issue.code === 'invalid_value' && path === 'token_uri')
    throw new CredentialSchemaError(field, `must be ${GOOGLE_TOKEN_URL} (or left out)`);
  if (issue.code === 'invalid_value')
    throw new CredentialSchemaError(field, "must be Google's own value (or left out)");
  const top = issue.path[0];
  if (issue.code === 'invalid_type' && (parsed as Record<string, unknown>)[String(top)] === undefined)
    throw new CredentialSchemaError(field, 'required');
  if (issue.code === 'invalid_type') throw new CredentialSchemaError(field, `must be a ${issue.expected}`);
  throw new CredentialSchemaError(field, issue.message);
}
