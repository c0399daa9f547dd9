/**
 * Exact-value redaction: every secret the process holds (the admin key, the events secret, the
 * encryption key, the provider credentials it decrypted, the API keys it verified) is registered
 * here once, and every text that leaves the process (error bodies, SSE events, log lines, sanitised
 * provider messages) passes through {@link redactSecrets}. It complements the shape rules of
 * `sanitizeProviderMessage`, which catch secrets the process was never told about.
 */

/** Shortest value registered, in characters: shorter strings would redact ordinary words. */
export const MIN_SECRET_CHARS = 8;
/** Most values held; the oldest registered goes first (the process-wide secrets are pinned). */
export const MAX_SECRETS = 20_000;

const REDACTED = '***';

/** Registered values (and their escaped forms), oldest first; `true` marks a pinned one. */
const values = new Map<string, boolean>();
/** The registered values by their first MIN_SECRET_CHARS characters (built lazily). */
let byPrefix: Map<string, string[]> | null = null;

/** The forms a value takes in text: as is, JSON-escaped, URL-encoded. */
function forms(value: string): string[] {
  const out = new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)]);
  return [...out].filter((v) => v.length >= MIN_SECRET_CHARS);
}

/**
 * Registers secret values for redaction (`undefined`, `null` and values under 8 characters are
 * ignored). `pinned` values (the process-wide secrets from the config) are never evicted; others
 * are, oldest first, past {@link MAX_SECRETS}. Never throws.
 */
export function registerSecrets(
  secrets: ReadonlyArray<string | null | undefined>,
  options: { pinned?: boolean } = {},
): void {
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_CHARS) continue;
    for (const form of forms(secret)) {
      const pinned = values.get(form);
      if (pinned === undefined) byPrefix = null;
      // (Re)inserted at the young end; a pinned value stays pinned.
      values.delete(form);
      values.set(form, pinned === true || options.pinned === true);
    }
  }
  if (values.size > MAX_SECRETS) {
    for (const [form, pinned] of values) {
      if (values.size <= MAX_SECRETS) break;
      if (!pinned) values.delete(form);
    }
    byPrefix = null;
  }
}

/** Up to this many distinct prefixes, {@link redactSecrets} first checks each with `indexOf`. */
const FAST_CHECK_MAX_PREFIXES = 64;

/** True when `text` contains one of the prefixes (a value can only match where its prefix does). */
function containsAnyPrefix(text: string, prefixes: Map<string, string[]>): boolean {
  for (const prefix of prefixes.keys()) if (text.includes(prefix)) return true;
  return false;
}

function index(): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const value of values.keys()) {
    const key = value.slice(0, MIN_SECRET_CHARS);
    const list = map.get(key);
    if (list) list.push(value);
    else map.set(key, [value]);
  }
  return map;
}

/**
 * Replaces every occurrence of a registered secret in `text` with `***`, the longest match at each
 * position first (so a key containing another registered key is removed whole). One map lookup per
 * character of `text` whatever the number of secrets. Never throws.
 */
export function redactSecrets(text: string): string {
  if (values.size === 0 || typeof text !== 'string' || text.length < MIN_SECRET_CHARS) return text;
  byPrefix ??= index();
  // Nearly every text holds no secret: with few prefixes, a native search for each rules that out at
  // once, instead of the walk below over every character.
  if (byPrefix.size <= FAST_CHECK_MAX_PREFIXES && !containsAnyPrefix(text, byPrefix)) return text;
  let out = '';
  let last = 0;
  for (let i = 0; i + MIN_SECRET_CHARS <= text.length;) {
    const candidates = byPrefix.get(text.slice(i, i + MIN_SECRET_CHARS));
    let matched = 0;
    if (candidates) for (const c of candidates) if (c.length > matched && text.startsWith(c, i)) matched = c.length;
    if (matched === 0) {
      i += 1;
      continue;
    }
    out += `${text.slice(last, i)}${REDACTED}`;
    i += matched;
    last = i;
  }
  return last === 0 ? text : out + text.slice(last);
}

/**
 * The secret values inside provider credentials as stored (API keys, AWS keys and session token,
 * GCP access token, and the private key and its id inside a service-account JSON).
 */
export function credentialSecrets(credentials: Readonly<Record<string, unknown>> | null | undefined): string[] {
  if (!credentials) return [];
  const out: string[] = [];
  for (const [name, value] of Object.entries(credentials)) {
    if (typeof value !== 'string') continue;
    if (name === 'gcpServiceAccountJson') {
      try {
        const json = JSON.parse(value) as Record<string, unknown>;
        for (const field of ['private_key', 'private_key_id', 'client_secret', 'refresh_token']) {
          const inner = json[field];
          if (typeof inner === 'string') out.push(inner, ...pemBody(inner));
        }
      } catch {
        // not JSON: registered as a whole below
      }
    }
    out.push(value);
  }
  return out;
}

/** The base64 lines of a PEM key, each long enough to be a secret on its own. */
function pemBody(pem: string): string[] {
  return pem
    .split(/\\n|\n/)
    .map((line) => line.trim())
    .filter((line) => line.length >= 40 && !line.startsWith('-----'));
}
