import { EgressPolicy } from '../egress/egress-policy';

/**
 * Factory options whose egress policy allow-lists the given loopback servers (the fake upstream), as
 * an operator's `ASK_PROVIDER_URL_ALLOWLIST` would: the specs then run the production transport.
 */
export function allowing(...servers: Array<{ url: string } | string>): { egress: EgressPolicy } {
  const origins = servers.map((s) => new URL(typeof s === 'string' ? s : s.url).origin);
  return { egress: new EgressPolicy({ allowList: origins.map((origin) => ({ origin, pathPrefix: '' })) }) };
}
