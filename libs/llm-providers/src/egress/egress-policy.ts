import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { isIP } from 'node:net';
import { Agent, buildConnector, type Dispatcher, fetch as undiciFetch } from 'undici';
import type { FetchLike } from '../wire/http';
import { refusedName, refusedRange } from './address-ranges';

/** One allow-listed endpoint: an origin (`https://host:port`) and a path prefix (`''` for any path). */
export interface AllowedEndpoint {
  origin: string;
  pathPrefix: string;
}

/** `dns.lookup`'s callback shape, as Node's `net.connect` calls a custom `lookup`. */
export type LookupFunction = (
  hostname: string,
  options: { family?: number | string; all?: boolean; hints?: number },
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

/** What the operator decided about outgoing provider connections. */
export interface EgressSettings {
  /** `ASK_PROVIDER_URL_ALLOWLIST`: endpoints allowed even when internal, and the only ones a project key may set. */
  allowList?: readonly AllowedEndpoint[];
  /** `ASK_PROVIDER_RESOLVE`: fixed addresses per host name, consulted before DNS (still checked). */
  staticHosts?: ReadonlyArray<{ host: string; addresses: readonly string[] }>;
  /** The resolver behind the static hosts (default `dns.lookup`). */
  lookup?: LookupFunction;
}

/**
 * A refused provider target: `field` is the setting that named it (`llm.baseUrl`, `embedding.baseUrl`),
 * `reason` says why without the resolved address (`resolves to a loopback address`).
 */
export class EgressRefusedError extends Error {
  override readonly name = 'EgressRefusedError';
  readonly code = 'ERR_EGRESS_REFUSED';

  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
  }
}

/** True for an {@link EgressRefusedError}, also one wrapped as the `cause` of a fetch or SDK error. */
export function findEgressRefusal(err: unknown): EgressRefusedError | undefined {
  const seen = new Set<unknown>();
  for (
    let current = err;
    current && typeof current === 'object' && !seen.has(current);
    current = (current as { cause?: unknown }).cause
  ) {
    seen.add(current);
    if (current instanceof EgressRefusedError) return current;
    const e = current as { name?: unknown; field?: unknown; reason?: unknown };
    if (e.name === 'EgressRefusedError' && typeof e.field === 'string' && typeof e.reason === 'string')
      return new EgressRefusedError(e.field, e.reason);
  }
  return undefined;
}

/** How long the save-time check waits for DNS, in milliseconds. */
const SAVE_TIME_LOOKUP_MS = 3_000;

/** ipaddr.js range ids in the words of the RFCs that define them (the rest are one lower-case word already). */
const RANGE_WORDS: Readonly<Record<string, string>> = {
  linkLocal: 'a link-local',
  uniqueLocal: 'a unique-local',
  carrierGradeNat: 'a carrier-grade NAT',
  unspecified: 'an unspecified',
  ipv4Mapped: 'an IPv4-mapped',
  rfc6145: 'an RFC 6145 translated',
  rfc6052: 'an RFC 6052 NAT64',
  '6to4': 'a 6to4',
  teredo: 'a Teredo',
  benchmarking: 'a benchmarking',
  amt: 'an AMT',
  as112: 'an AS112',
  deprecated: 'a deprecated',
  orchid2: 'an ORCHIDv2',
  droneRemoteIdProtocolEntityTags: 'a drone remote ID',
  reserved: 'a reserved',
};

/** `a loopback address`, `a link-local address`… for a `refusedRange` answer. */
function describeRange(range: string): string {
  if (range === 'not an IP address') return range;
  return `${RANGE_WORDS[range] ?? `${/^[aeiouAEIOU]/.test(range) ? 'an' : 'a'} ${range}`} address`;
}

/**
 * Where provider calls may connect. One policy per process (built from the config); every provider
 * adapter's HTTP traffic goes through {@link EgressPolicy.fetch} (undici with a checking connector) or,
 * for the AWS SDK, {@link EgressPolicy.lookup}. The checks:
 *
 * 1. at save time and when an adapter is built ({@link checkUrl}): http(s) only, no user-info, no
 *    fragment; an IP literal in a refused range (`refusedRange`: loopback, private, link-local,
 *    unique-local, CGNAT, metadata…; decimal, octal and hex IPv4 forms are normalised by WHATWG `URL`
 *    first), or a local name (`refusedName`: `localhost`, `*.internal`, single labels…) is refused;
 * 2. on every connection, after DNS (so DNS rebinding and redirects are covered): each resolved
 *    address is checked and the connection uses the checked address, never a second lookup.
 *
 * An allow-listed origin skips the address checks (an operator's local Ollama on 127.0.0.1:11434).
 */
export class EgressPolicy {
  private readonly allowList: readonly AllowedEndpoint[];
  private readonly staticHosts: ReadonlyMap<string, readonly string[]>;
  private readonly baseLookup: LookupFunction;
  private readonly fetches = new Map<string, FetchLike>();
  private readonly dispatchers = new Map<string, Dispatcher>();

  constructor(settings: EgressSettings = {}) {
    this.allowList = settings.allowList ?? [];
    this.staticHosts = new Map((settings.staticHosts ?? []).map((h) => [h.host.toLowerCase(), h.addresses]));
    this.baseLookup = settings.lookup ?? (dnsLookup as unknown as LookupFunction);
  }

  /** A policy that also allow-lists `urls` (code-level overrides: the CLI's and tests' fake upstream). */
  withAllowed(urls: readonly string[]): EgressPolicy {
    if (urls.length === 0) return this;
    const extra = urls.map((u) => ({ origin: new URL(u).origin, pathPrefix: '' }));
    return new EgressPolicy({
      allowList: [...this.allowList, ...extra],
      staticHosts: [...this.staticHosts].map(([host, addresses]) => ({ host, addresses })),
      lookup: this.baseLookup,
    });
  }

  /** True when the URL is inside an allow-list entry (same origin, path under its prefix). */
  isAllowListed(url: string | URL): boolean {
    const parsed = typeof url === 'string' ? safeUrl(url) : url;
    if (!parsed) return false;
    const path = parsed.pathname;
    return this.allowList.some(
      (entry) =>
        entry.origin === parsed.origin &&
        (entry.pathPrefix === '' || path === entry.pathPrefix || path.startsWith(`${entry.pathPrefix}/`)),
    );
  }

  private originAllowListed(origin: string): boolean {
    return this.allowList.some((entry) => entry.origin === origin);
  }

  /**
   * Checks a provider URL without DNS. @returns the parsed URL.
   * @throws EgressRefusedError naming `field` (scheme, user-info, fragment, refused IP literal, local name).
   */
  checkUrl(raw: string, field: string): URL {
    const url = safeUrl(raw);
    if (!url) throw new EgressRefusedError(field, 'not a valid URL');
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new EgressRefusedError(field, 'only http and https URLs are allowed');
    if (url.username || url.password)
      throw new EgressRefusedError(field, 'a URL with user-info (user:pass@) is not allowed');
    if (url.hash || raw.includes('#')) throw new EgressRefusedError(field, 'a URL with a fragment (#) is not allowed');
    if (this.isAllowListed(url)) return url;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const range = refusedRange(host);
      if (range)
        throw new EgressRefusedError(
          field,
          `${describeRange(range)} is not allowed unless the operator allow-lists it`,
        );
    } else {
      const name = refusedName(host);
      if (name) throw new EgressRefusedError(field, `a ${name} is not allowed unless the operator allow-lists it`);
    }
    return url;
  }

  /**
   * {@link checkUrl}, then resolves a host name (static hosts, then DNS) and refuses it when any
   * address is refused. A name that does not resolve now passes (the connection check still runs).
   * @throws EgressRefusedError naming `field`.
   */
  async checkResolved(raw: string, field: string): Promise<URL> {
    const url = this.checkUrl(raw, field);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (this.isAllowListed(url) || isIP(host)) return url;
    const addresses = await new Promise<LookupAddress[]>((resolve) => {
      // A resolver that does not answer in time is no verdict: the connection check still runs.
      const timer = setTimeout(() => resolve([]), SAVE_TIME_LOOKUP_MS);
      this.resolve(host, (err, list) => {
        clearTimeout(timer);
        resolve(err ? [] : list);
      });
    });
    for (const { address } of addresses) {
      const range = refusedRange(address);
      if (range)
        throw new EgressRefusedError(
          field,
          `the host resolves to ${describeRange(range)}, which is not allowed unless the operator allow-lists it`,
        );
    }
    return url;
  }

  private resolve(
    host: string,
    callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
  ): void {
    const fixed = this.staticHosts.get(host.toLowerCase().replace(/\.$/, ''));
    if (fixed) {
      callback(
        null,
        fixed.map((address) => ({ address, family: isIP(address) })),
      );
      return;
    }
    this.baseLookup(host, { all: true }, (err, addresses) => callback(err, err ? [] : (addresses as LookupAddress[])));
  }

  /**
   * A `dns.lookup`-compatible resolver that refuses (with {@link EgressRefusedError}) any name with a
   * refused address, for `net.connect` / agents. `checked: false` only applies the static hosts
   * (used for allow-listed origins).
   */
  lookup(field: string, checked = true): LookupFunction {
    return (hostname, options, callback) => {
      this.resolve(hostname, (err, all) => {
        if (err) return callback(err, []);
        const family = Number(options?.family) || 0;
        const addresses = family ? all.filter((a) => a.family === family) : all;
        if (checked) {
          for (const { address } of addresses) {
            const range = refusedRange(address);
            if (range)
              return callback(
                new EgressRefusedError(
                  field,
                  `the host resolves to ${describeRange(range)}, which is not allowed unless the operator allow-lists it`,
                ) as NodeJS.ErrnoException,
                [],
              );
          }
        }
        if (addresses.length === 0) {
          const notFound = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
          return callback(notFound, []);
        }
        if (options?.all) return callback(null, addresses);
        return callback(null, addresses[0].address, addresses[0].family);
      });
    };
  }

  /**
   * The undici dispatcher every provider fetch uses for `field`: each new connection is checked
   * (IP literal by range, name by its resolved addresses) unless its origin is allow-listed. Redirects
   * go through the same dispatcher, so a redirect to a refused target fails the same way. Cached.
   */
  dispatcher(field: string): Dispatcher {
    let dispatcher = this.dispatchers.get(field);
    if (!dispatcher) {
      const checked = buildConnector({ lookup: this.lookup(field, true) } as buildConnector.BuildOptions);
      const plain = buildConnector({ lookup: this.lookup(field, false) } as buildConnector.BuildOptions);
      const connect: buildConnector.connector = (options, callback) => {
        const host = options.hostname.replace(/^\[|\]$/g, '');
        const port = options.port ? `:${options.port}` : '';
        const origin = safeUrl(`${options.protocol}//${options.hostname}${port}`)?.origin ?? '';
        if (this.originAllowListed(origin)) return plain(options, callback);
        const refusal = isIP(host) ? refusedRange(host) : refusedName(host);
        if (refusal) {
          return callback(
            new EgressRefusedError(
              field,
              `${isIP(host) ? describeRange(refusal) : `a ${refusal}`} is not allowed unless the operator allow-lists it`,
            ),
            null,
          );
        }
        return checked(options, callback);
      };
      dispatcher = new Agent({ connect });
      this.dispatchers.set(field, dispatcher);
    }
    return dispatcher;
  }

  /**
   * `fetch` through {@link dispatcher} (undici's fetch; the SDKs accept it). Cached per field.
   * Redirects are never followed: a 3xx answer with a `Location` rejects with {@link EgressRefusedError}
   * (its body discarded). fetch drops only `Authorization` on a cross-origin hop, so a redirect would
   * carry `x-api-key` (Anthropic) or `api-key` (Azure) to a host the credential was not given for.
   */
  fetch(field: string): FetchLike {
    let guarded = this.fetches.get(field);
    if (!guarded) {
      const dispatcher = this.dispatcher(field);
      guarded = (async (input: Parameters<FetchLike>[0], init?: Parameters<FetchLike>[1]) => {
        const response = await undiciFetch(
          input as never,
          { ...(init as object), dispatcher, redirect: 'manual' } as never,
        );
        if (response.status >= 300 && response.status < 400 && response.headers.has('location')) {
          await response.body?.cancel().catch(() => undefined);
          throw new EgressRefusedError(
            field,
            `the provider answered with a redirect (${response.status}), which is not followed`,
          );
        }
        return response;
      }) as unknown as FetchLike;
      this.fetches.set(field, guarded);
    }
    return guarded;
  }

  /** Node agents for SDKs that take `http(s).Agent`s (names checked through {@link lookup}). */
  agents(field: string): { httpAgent: HttpAgent; httpsAgent: HttpsAgent } {
    const lookup = this.lookup(field) as never;
    return {
      httpAgent: new HttpAgent({ keepAlive: true, lookup }),
      httpsAgent: new HttpsAgent({ keepAlive: true, lookup }),
    };
  }

  /** Closes the cached dispatchers (tests; processes exit with them open). */
  async close(): Promise<void> {
    await Promise.all([...this.dispatchers.values()].map((d) => d.close()));
    this.dispatchers.clear();
    this.fetches.clear();
  }
}

function safeUrl(raw: string): URL | undefined {
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

/** The policy with no allow-list and system DNS: what a factory uses when the caller passes none. */
export const STRICT_EGRESS = new EgressPolicy();

const fromConfig = new WeakMap<object, EgressPolicy>();

/**
 * The process's policy from its validated config (`ASK_PROVIDER_URL_ALLOWLIST`, `ASK_PROVIDER_RESOLVE`),
 * one per config object so its connection pools are shared by every adapter.
 */
export function egressPolicyFor(config: {
  readonly ASK_PROVIDER_URL_ALLOWLIST: readonly AllowedEndpoint[];
  readonly ASK_PROVIDER_RESOLVE: ReadonlyArray<{ host: string; addresses: readonly string[] }>;
}): EgressPolicy {
  let policy = fromConfig.get(config);
  if (!policy) {
    policy = new EgressPolicy({
      allowList: config.ASK_PROVIDER_URL_ALLOWLIST,
      staticHosts: config.ASK_PROVIDER_RESOLVE,
    });
    fromConfig.set(config, policy);
  }
  return policy;
}
