import { isIP } from 'node:net';

/**
 * One provider endpoint the operator allows (`ASK_PROVIDER_URL_ALLOWLIST`): an origin and an optional
 * path prefix. A provider URL matches when its origin is equal and its path starts with the prefix.
 */
export interface AllowedEndpoint {
  /** `scheme://host[:port]`, as WHATWG `URL.origin` writes it (lower-case host, default port omitted). */
  origin: string;
  /** Path prefix without a trailing slash; `''` allows every path of the origin. */
  pathPrefix: string;
}

/** A fixed answer for one host name (`ASK_PROVIDER_RESOLVE`), consulted before DNS. */
export interface StaticHost {
  /** Lower-case host name without a trailing dot. */
  host: string;
  /** IPv4 or IPv6 addresses, in order. */
  addresses: string[];
}

/**
 * Parses one allow-list entry: `http(s)://host[:port][/path-prefix]`, no user-info, query or fragment.
 * @throws Error saying what is wrong with the entry.
 */
export function parseAllowedEndpoint(entry: string): AllowedEndpoint {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    throw new Error(`"${entry}" is not a URL (expected http(s)://host[:port][/path])`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`"${entry}": only http and https are allowed`);
  if (url.username || url.password) throw new Error(`"${entry}": user-info is not allowed`);
  if (url.search || url.hash || entry.includes('#') || entry.includes('?'))
    throw new Error(`"${entry}": a query or fragment is not allowed`);
  return { origin: url.origin, pathPrefix: url.pathname.replace(/\/+$/, '') };
}

/** Parses `ASK_PROVIDER_URL_ALLOWLIST`: entries separated by commas or whitespace. @throws Error naming the bad entry. */
export function parseAllowList(value: string | undefined): AllowedEndpoint[] {
  return (value ?? '')
    .split(/[\s,]+/)
    .filter((entry) => entry.length > 0)
    .map(parseAllowedEndpoint);
}

/**
 * Parses `ASK_PROVIDER_RESOLVE`: `host=address[|address]` entries separated by commas, like curl's
 * `--resolve` (e.g. `llm.corp.example=10.1.2.3,gw.example=2001:db8::5`). @throws Error naming the bad entry.
 */
export function parseStaticHosts(value: string | undefined): StaticHost[] {
  return (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0)
    .map((entry) => {
      const [host, list, extra] = entry.split('=');
      if (extra !== undefined || !host || !list) throw new Error(`"${entry}": expected host=address[|address]`);
      const name = host.trim().toLowerCase().replace(/\.$/, '');
      if (!/^[a-z0-9.-]+$/.test(name) || isIP(name) !== 0) throw new Error(`"${entry}": "${host}" is not a host name`);
      const addresses = list.split('|').map((a) => a.trim().replace(/^\[|\]$/g, ''));
      for (const address of addresses)
        if (isIP(address) === 0) throw new Error(`"${entry}": "${address}" is not an IP address`);
      return { host: name, addresses };
    });
}
