import ipaddr from 'ipaddr.js';

/**
 * Why an address may not be connected to, or `undefined` for a public unicast address.
 *
 * Ranges come from `ipaddr.js` (its IANA special-purpose tables: loopback, private, link-local
 * 169.254.0.0/16 and fe80::/10 (cloud metadata at 169.254.169.254 and fd00:ec2::254 included),
 * unique-local fc00::/7, carrier-grade NAT 100.64.0.0/10, unspecified, broadcast, multicast,
 * reserved and documentation ranges, NAT64, 6to4, Teredo…): anything it does not call `unicast` is
 * refused. An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`) is judged as its IPv4 address; an
 * IPv4-compatible one (`::7f00:1`, deprecated) is refused outright.
 *
 * @param address an IPv4 or IPv6 literal (brackets allowed); anything else is refused as `not an IP address`.
 */
export function refusedRange(address: string): string | undefined {
  const literal = address.replace(/^\[|\]$/g, '');
  if (!ipaddr.isValid(literal)) return 'not an IP address';
  let ip = ipaddr.parse(literal);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  const range = ip.range();
  if (range !== 'unicast') return range;
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0))
    return 'IPv4-compatible IPv6';
  return undefined;
}

/**
 * Why a host NAME is refused before any lookup, or `undefined`: `localhost` and `*.localhost`
 * (RFC 6761), `*.local` (mDNS), `*.internal` and `*.home.arpa` (private-use names, which is where
 * cloud metadata names such as `metadata.google.internal` live), and single-label names (`redis`,
 * `postgres`: names of a private network).
 *
 * @param host a host name, any case, trailing dot allowed.
 */
export function refusedName(host: string): string | undefined {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return 'localhost name';
  if (/\.(local|internal|home\.arpa)$/.test(name)) return 'private-use name';
  if (!name.includes('.')) return 'single-label name';
  return undefined;
}
