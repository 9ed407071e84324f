/**
 * The one check that keeps the harness's own outgoing requests (push webhooks, the built-in
 * `fetch` tool) off its own networks: an address that is loopback, private, link-local,
 * unique-local, unspecified, multicast or otherwise reserved is refused. The check runs inside
 * the connection's own DNS lookup (`publicOnlyLookup`), so the address connected to is the
 * address checked: a DNS rebinding gets nothing through.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** The address blocks no outgoing request may reach unless private networks are allowed (IANA special-purpose registries). */
const NOT_PUBLIC = (() => {
  // One list per family: a list holding both matches an IPv4 address against IPv4-mapped IPv6 rules.
  const v4list = new BlockList();
  const v6list = new BlockList();
  const v4 = [
    ['0.0.0.0', 8], // "this network", unspecified
    ['10.0.0.0', 8],
    ['100.64.0.0', 10], // shared (carrier-grade NAT)
    ['127.0.0.0', 8],
    ['169.254.0.0', 16], // link-local, cloud metadata
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.0.2.0', 24],
    ['192.88.99.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['198.51.100.0', 24],
    ['203.0.113.0', 24],
    ['224.0.0.0', 4], // multicast
    ['240.0.0.0', 4], // reserved, broadcast
  ] as const;
  for (const [net, prefix] of v4) v4list.addSubnet(net, prefix, 'ipv4');
  const v6 = [
    ['::', 96], // unspecified, loopback, IPv4-compatible
    ['::ffff:0:0', 96], // IPv4-mapped: another way to an IPv4 address
    ['64:ff9b::', 96], // NAT64: likewise
    ['64:ff9b:1::', 48],
    ['100::', 64], // discard
    ['2001::', 23], // IETF protocol assignments (Teredo among them)
    ['2001:db8::', 32], // documentation
    ['2002::', 16], // 6to4: embeds an IPv4 address
    ['3fff::', 20], // documentation
    ['fc00::', 7], // unique local
    ['fe80::', 10], // link-local
    ['fec0::', 10], // site-local (deprecated)
    ['ff00::', 8], // multicast
  ] as const;
  for (const [net, prefix] of v6) v6list.addSubnet(net, prefix, 'ipv6');
  return { v4: v4list, v6: v6list };
})();

/** Whether an outgoing request may connect to `address` (an IP address, as DNS or a URL gives it). */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return family === 4 ? !NOT_PUBLIC.v4.check(address, 'ipv4') : !NOT_PUBLIC.v6.check(address, 'ipv6');
}

/** The URL's host as an address or name: brackets off an IPv6 literal. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Why `url` is refused, or undefined when it may be used: it must be http(s), and, unless
 * private networks are allowed, its host must resolve to public addresses only. `setting` names
 * the configuration that would allow private ones, for the reply.
 */
export async function checkPublicUrl(url: string, allowPrivate: boolean, setting: string): Promise<string | undefined> {
  const parsed = URL.canParse(url) ? new URL(url) : undefined;
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    return 'url must be an absolute http:// or https:// URL';
  if (allowPrivate) return undefined;
  const host = hostOf(parsed);
  const addresses = isIP(host)
    ? [host]
    : await new Promise<string[]>((resolve) =>
        dnsLookup(host, { all: true }, (error, found) => resolve(error ? [] : found.map((a) => a.address))),
      );
  if (addresses.length === 0) return `url's host ${host} could not be resolved`;
  if (!addresses.every(isPublicAddress)) return `url's host ${host} is not on a public address (${setting} is off)`;
  return undefined;
}

/** A connection refused because its address is not public. */
export class NotPublicAddress extends Error {}

/** Refuses a URL whose host is itself an address that is not public, before any connection. */
export function refuseLiteralAddress(url: URL): void {
  const host = hostOf(url);
  if (isIP(host) && !isPublicAddress(host)) throw new NotPublicAddress(`${host} is not a public address`);
}

/**
 * A `lookup` for node's sockets that fails unless every address the name resolves to is
 * public: the socket connects to one of the addresses checked here, never to another answer.
 */
export function publicOnlyLookup(
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    if (addresses.length === 0 || !addresses.every((a) => isPublicAddress(a.address)))
      return callback(new NotPublicAddress(`${hostname} resolves to an address that is not public`), []);
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}
