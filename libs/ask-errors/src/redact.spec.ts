import { credentialSecrets, MIN_SECRET_CHARS, redactSecrets, registerSecrets } from './redact';
import { sanitizeProviderMessage } from './sanitize';

// Keys of shapes the shape rules of sanitizeProviderMessage do not know.
const HEX32 = '9f86d081884c7d659a2feaa0c55ad015';
const GATEWAY = 'gw-live-Q2hlY2sgdGhpcyBvdXQgbm93IQ';
const BASE64URL = 'u4Xq-9_ZbN2kLm0PqRsTuVwXyZ0123456789abcDEF';

describe('redactSecrets', () => {
  beforeAll(() => registerSecrets([HEX32, GATEWAY, BASE64URL, 'short', undefined, null]));

  it('replaces every occurrence of a registered value, whatever its shape', () => {
    const text = `Incorrect API key provided: ${HEX32}. Also ${GATEWAY} and ${BASE64URL}; again ${HEX32}`;
    expect(redactSecrets(text)).toBe('Incorrect API key provided: ***. Also *** and ***; again ***');
  });

  it('redacts the JSON-escaped and URL-encoded forms too', () => {
    const odd = 'p@ss/w"rd\\with+odd=chars';
    registerSecrets([odd]);
    expect(redactSecrets(JSON.stringify({ echoed: odd }))).toBe('{"echoed":"***"}');
    expect(redactSecrets(`?key=${encodeURIComponent(odd)}`)).toBe('?key=***');
  });

  it('ignores values shorter than MIN_SECRET_CHARS, so ordinary words survive', () => {
    expect(MIN_SECRET_CHARS).toBe(8);
    expect(redactSecrets('a short message')).toBe('a short message');
  });

  it('removes the longest registered value at a position whole', () => {
    const outer = `${HEX32}-suffix-more`;
    registerSecrets([outer]);
    expect(redactSecrets(`x ${outer} y ${HEX32} z`)).toBe('x *** y *** z');
  });

  it('returns text without a secret unchanged', () => {
    const text = 'nothing to see here, only words and 12345678';
    expect(redactSecrets(text)).toBe(text);
  });

  it('redacts the same with a few registered prefixes (checked with indexOf first) and with many (scanned)', () => {
    const text = `{"text":"key ${GATEWAY} and again ${HEX32}, nothing else"}`;
    expect(redactSecrets(text)).toBe('{"text":"key *** and again ***, nothing else"}');
    expect(redactSecrets('{"text":"no secret in this event at all"}')).toBe(
      '{"text":"no secret in this event at all"}',
    );
    // Past 64 distinct prefixes the fast check is skipped: the same answers from the scan.
    registerSecrets(Array.from({ length: 80 }, (_, i) => `many-secrets-${String(i).padStart(3, '0')}-value`));
    expect(redactSecrets(text)).toBe('{"text":"key *** and again ***, nothing else"}');
    expect(redactSecrets('saw many-secrets-042-value here')).toBe('saw *** here');
    expect(redactSecrets('{"text":"no secret in this event at all"}')).toBe(
      '{"text":"no secret in this event at all"}',
    );
  });

  it('runs inside sanitizeProviderMessage before the shape rules', () => {
    expect(sanitizeProviderMessage(`401 Incorrect API key provided: ${GATEWAY}`)).toBe(
      '401 Incorrect API key provided: ***',
    );
  });
});

describe('credentialSecrets', () => {
  it('lists every string credential, and the private key inside a service-account JSON', () => {
    const pem = `-----BEGIN PRIVATE KEY-----\\n${'A'.repeat(64)}\\n-----END PRIVATE KEY-----\\n`;
    const json = JSON.stringify({
      type: 'service_account',
      private_key_id: 'abcdef0123456789',
      private_key: pem.replace(/\\\\n/g, '\n'),
    });
    const secrets = credentialSecrets({
      apiKey: HEX32,
      awsSecretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      gcpServiceAccountJson: json,
    });
    expect(secrets).toEqual(
      expect.arrayContaining([
        HEX32,
        'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
        'abcdef0123456789',
        'A'.repeat(64),
        json,
      ]),
    );
  });

  it('is empty for no credentials', () => {
    expect(credentialSecrets(null)).toEqual([]);
  });
});
