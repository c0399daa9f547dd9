import { redactSecrets } from './redact';

/** Longest sanitised provider message, in characters (an ellipsis marks a cut). */
export const MAX_PROVIDER_MESSAGE_CHARS = 500;

/** Longest input scanned, in characters: a provider's HTML error page is cut before the regexes run. */
const MAX_SCANNED_CHARS = 20000;

const REDACTED = '***';

/** Query-string parameters whose value is a secret (`?key=…`, `&X-Amz-Signature=…`). */
const SECRET_QUERY_PARAMS = [
  'api[-_]?key',
  'key',
  'token',
  'access[-_]?token',
  'secret',
  'client[-_]?secret',
  'password',
  'sig',
  'signature',
  'x-amz-signature',
  'x-amz-credential',
  'x-amz-security-token',
  'code',
].join('|');

/** Header, JSON or prose names whose value is a secret (`api-key: …`, `"x-api-key": "…"`, `key=…`). */
const SECRET_FIELD_NAMES = [
  'x-api-key',
  'api[-_]?key',
  'apikey',
  'x-goog-api-key',
  'key',
  'secret',
  'secret[-_]?access[-_]?key',
  'password',
  'passwd',
  'token',
  'access[-_]?token',
  'client[-_]?secret',
].join('|');

/** An AWS secret access key only when the 40 characters mix lower case, upper case and digits. */
function redactAwsSecret(candidate: string): string {
  return /[0-9]/.test(candidate) && /[a-z]/.test(candidate) && /[A-Z]/.test(candidate) ? REDACTED : candidate;
}

/**
 * Redaction rules, applied in order. Each replaces a secret with `***` and keeps what names it
 * (a scheme, a header name, a key prefix), so the message still reads as a sentence.
 */
const RULES: ReadonlyArray<[RegExp, string | ((match: string) => string)]> = [
  // Credentials in URLs: https://user:pass@host → https://***@host
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi, `$1${REDACTED}@`],
  // JWTs (three base64url segments, the first a JSON header)
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, REDACTED],
  // Bearer / Basic tokens in an Authorization header or prose
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/gi, `$1 ${REDACTED}`],
  // Anthropic and OpenAI keys: sk-ant-…, sk-proj-…, sk-…
  [/\bsk-ant-[A-Za-z0-9_-]+/g, `sk-ant-${REDACTED}`],
  [/\bsk-[A-Za-z0-9_-]{8,}/g, `sk-${REDACTED}`],
  // Google OAuth access tokens and API keys
  [/\bya29\.[A-Za-z0-9._-]+/g, `ya29.${REDACTED}`],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, REDACTED],
  // AWS access key ids (long-term AKIA…, temporary ASIA…)
  [/\b(AKIA|ASIA)[A-Z0-9]{16}\b/g, REDACTED],
  // Query-string secrets and named secrets in headers, JSON or prose
  [new RegExp(`([?&](?:${SECRET_QUERY_PARAMS})=)[^&\\s#"']+`, 'gi'), `$1${REDACTED}`],
  [new RegExp(`\\b((?:${SECRET_FIELD_NAMES})["']?\\s*[:=]\\s*["']?)[^\\s"',;&}]+`, 'gi'), `$1${REDACTED}`],
  // AWS secret access keys: 40 base64 characters standing alone
  [/(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g, redactAwsSecret],
];

/**
 * Makes a provider's error message safe to put in an error body's `details` and in logs.
 *
 * First removes the exact value of every secret the process holds (`redactSecrets`: provider
 * credentials, verified API keys, the admin key, the events secret, the encryption key), whatever its
 * shape; then, as a second net, secrets recognised by shape:
 * API keys (`sk-…`, `sk-ant-…`, Google `AIza…`), AWS access key ids (`AKIA…`/`ASIA…`) and
 * 40-character secret keys, `Bearer`/`Basic` tokens, Google `ya29.` tokens, JWTs, `api-key`/`x-api-key`/
 * `key=`/`password=` values, query-string secrets and `user:pass@` credentials in URLs; then collapses
 * whitespace and cuts the result to `MAX_PROVIDER_MESSAGE_CHARS` (500) characters.
 *
 * @param message the provider's raw message (any length, characters).
 * @returns the sanitised single-line message, at most 500 characters; never throws.
 */
export function sanitizeProviderMessage(message: string): string {
  const raw = String(message ?? '');
  // A cut may split a secret; drop the trailing fragment so no half-key survives unredacted.
  let text = redactSecrets(raw.length > MAX_SCANNED_CHARS ? raw.slice(0, MAX_SCANNED_CHARS).replace(/\S+$/, '') : raw);
  for (const [pattern, replacement] of RULES) {
    // Narrowed so each call matches one of String.prototype.replace's overloads.
    text = typeof replacement === 'string' ? text.replace(pattern, replacement) : text.replace(pattern, replacement);
  }
  text = text.replace(/\s+/g, ' ').trim();
  if (text.length > MAX_PROVIDER_MESSAGE_CHARS) {
    text = `${text.slice(0, MAX_PROVIDER_MESSAGE_CHARS - 1)}…`;
  }
  return text;
}
