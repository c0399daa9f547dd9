import { generateKeyPairSync } from 'node:crypto';
import { CredentialSchemaError, GOOGLE_TOKEN_URL, parseServiceAccountJson } from './vertex-credentials';

const PRIVATE_KEY = generateKeyPairSync('rsa', { modulusLength: 1024 })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();
const EMAIL = 'ask-test@demo-project.iam.gserviceaccount.com';

/** A key file with every field the Cloud console writes (https://cloud.google.com/iam/docs/keys-create-delete). */
const DOWNLOADED = {
  type: 'service_account',
  project_id: 'demo-project',
  private_key_id: '0123456789abcdef0123456789abcdef01234567',
  private_key: PRIVATE_KEY,
  client_email: EMAIL,
  client_id: '104735098267149875312',
  auth_uri: 'https://accounts.google.com/o/oauth2/auth',
  token_uri: GOOGLE_TOKEN_URL,
  auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
  client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(EMAIL)}`,
  universe_domain: 'googleapis.com',
};

/** The canary the attack aimed at: any address a credential names. */
const CANARY = 'http://127.0.0.1:9/token';

/** The refusal's `field: reason`, or `accepted`. */
function verdict(value: unknown): string {
  try {
    parseServiceAccountJson(typeof value === 'string' ? value : JSON.stringify(value));
    return 'accepted';
  } catch (err) {
    if (err instanceof CredentialSchemaError) return `${err.field}: ${err.reason}`;
    throw err;
  }
}

const UNKNOWN =
  'not a field of a service-account key (only type, client_email, private_key and the other fields of a downloaded key file are accepted)';

const TYPE_REFUSED = (type: string) =>
  `credentials.gcpServiceAccountJson.type: "${type}" is not accepted: only a "service_account" key (client_email and private_key) is, because other credential types name files or addresses`;

describe(parseServiceAccountJson.name, () => {
  it('accepts a key file as the Cloud console downloads it, and the minimal type + client_email + private_key', () => {
    expect(parseServiceAccountJson(JSON.stringify(DOWNLOADED))).toEqual(DOWNLOADED);
    const minimal = { type: 'service_account', client_email: EMAIL, private_key: PRIVATE_KEY };
    expect(parseServiceAccountJson(JSON.stringify(minimal))).toEqual(minimal);
  });

  // The four external-account forms and the two authorized-user forms: google-auth-library
  // reads the file / calls the address with its own HTTP client, so each is refused by its type.
  it.each([
    [
      'external_account with credential_source.file',
      {
        type: 'external_account',
        audience: '//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/x',
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        token_url: CANARY,
        credential_source: { file: '/proc/self/environ' },
      },
      'external_account',
    ],
    [
      'external_account with credential_source.url and headers',
      {
        type: 'external_account',
        audience: 'a',
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        token_url: 'https://sts.googleapis.com/v1/token',
        credential_source: { url: CANARY, headers: { 'Metadata-Flavor': 'Google' } },
      },
      'external_account',
    ],
    [
      'external_account with a hostile token_url',
      {
        type: 'external_account',
        audience: 'a',
        subject_token_type: 'x',
        token_url: CANARY,
        credential_source: { file: '/etc/hostname' },
      },
      'external_account',
    ],
    [
      'external_account with service_account_impersonation_url',
      {
        type: 'external_account',
        audience: 'a',
        subject_token_type: 'x',
        token_url: 'https://sts.googleapis.com/v1/token',
        service_account_impersonation_url: CANARY,
        credential_source: { file: '/etc/hostname' },
      },
      'external_account',
    ],
    [
      'authorized_user',
      { type: 'authorized_user', client_id: 'c', client_secret: 's', refresh_token: 'r', token_uri: CANARY },
      'authorized_user',
    ],
    [
      'external_account_authorized_user',
      {
        type: 'external_account_authorized_user',
        audience: 'a',
        client_id: 'c',
        client_secret: 's',
        refresh_token: 'r',
        token_url: CANARY,
        token_info_url: CANARY,
      },
      'external_account_authorized_user',
    ],
    [
      'impersonated_service_account',
      {
        type: 'impersonated_service_account',
        service_account_impersonation_url: CANARY,
        source_credentials: DOWNLOADED,
      },
      'impersonated_service_account',
    ],
  ])('refuses %s by its type, naming credentials.gcpServiceAccountJson.type', (_name, json, type) => {
    expect(verdict(json)).toBe(TYPE_REFUSED(type));
  });

  it.each([
    ['{not json', 'credentials.gcpServiceAccountJson: not valid JSON'],
    ['[]', 'credentials.gcpServiceAccountJson: must be a JSON object (a service-account key file)'],
    ['"service_account"', 'credentials.gcpServiceAccountJson: must be a JSON object (a service-account key file)'],
    ['null', 'credentials.gcpServiceAccountJson: must be a JSON object (a service-account key file)'],
  ])('refuses %j as not a key file', (text, want) => {
    expect(verdict(text)).toBe(want);
  });

  it.each([
    [
      'a hostile token_uri',
      { ...DOWNLOADED, token_uri: CANARY },
      `token_uri: must be ${GOOGLE_TOKEN_URL} (or left out)`,
    ],
    [
      'a token_uri with a query',
      { ...DOWNLOADED, token_uri: 'https://oauth2.googleapis.com/token?x=1' },
      `token_uri: must be ${GOOGLE_TOKEN_URL} (or left out)`,
    ],
    ['a hostile auth_uri', { ...DOWNLOADED, auth_uri: CANARY }, "auth_uri: must be Google's own value (or left out)"],
    [
      'another universe_domain',
      { ...DOWNLOADED, universe_domain: 'attacker.example' },
      "universe_domain: must be Google's own value (or left out)",
    ],
    [
      'a hostile client_x509_cert_url',
      { ...DOWNLOADED, client_x509_cert_url: 'https://attacker.example/x509/a' },
      "client_x509_cert_url: must be Google's certificate URL for the account",
    ],
    [
      'a credential_source beside it',
      { ...DOWNLOADED, credential_source: { file: '/proc/self/environ' } },
      `credential_source: ${UNKNOWN}`,
    ],
    [
      'a service_account_impersonation_url beside it',
      { ...DOWNLOADED, service_account_impersonation_url: CANARY },
      `service_account_impersonation_url: ${UNKNOWN}`,
    ],
    ['another type', { ...DOWNLOADED, type: 'something_else' }, 'type: must be "service_account"'],
    ['no type', { ...DOWNLOADED, type: undefined }, 'type: must be "service_account"'],
    ['no client_email', { ...DOWNLOADED, client_email: undefined }, 'client_email: required'],
    ['no private_key', { ...DOWNLOADED, private_key: undefined }, 'private_key: required'],
    ['a number as private_key', { ...DOWNLOADED, private_key: 42 }, 'private_key: must be a string'],
    [
      'a private_key that is no PEM',
      { ...DOWNLOADED, private_key: 'PLANTED-not-a-pem' },
      'private_key: must be a PEM PKCS#8 private key',
    ],
  ])('refuses a service_account key with %s, naming the field', (_name, json, want) => {
    expect(verdict(json)).toBe(`credentials.gcpServiceAccountJson.${want}`);
  });

  it('never echoes a value: an unknown key with odd characters is named "(a key)"', () => {
    const got = verdict({ ...DOWNLOADED, 'PLANTED\u202e/../x': 'PLANTED' });
    expect(got).toBe(`credentials.gcpServiceAccountJson.(a key): ${UNKNOWN}`);
    expect(verdict({ ...DOWNLOADED, private_key: 'PLANTED-not-a-pem' })).not.toContain('PLANTED');
  });
});
