import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';
import { withTraceHeaders } from '../telemetry/propagation.js';

/**
 * Where push notifications are POSTed (docs/push.md), and the one check that keeps a webhook off
 * the harness's own networks: an address that is loopback, private, link-local, unique-local,
 * unspecified, multicast or otherwise reserved is refused, both when a config is created
 * (`checkWebhookUrl`) and at every delivery, inside the connection's own DNS lookup, so that the
 * address connected to is the address checked (a DNS rebinding gets nothing through). A
 * redirect is not followed: a 3xx is a failed delivery.
 */

/** The address blocks no webhook may reach unless private networks are allowed (IANA special-purpose registries). */
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

/** Whether a webhook may connect to `address` (an IP address, as DNS or a URL gives it). */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return family === 4 ? !NOT_PUBLIC.v4.check(address, 'ipv4') : !NOT_PUBLIC.v6.check(address, 'ipv6');
}

/** Why a webhook URL is refused, or undefined when it may be used; resolves its host unless private networks are allowed. */
export async function checkWebhookUrl(url: string, allowPrivate: boolean): Promise<string | undefined> {
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
  if (!addresses.every(isPublicAddress))
    return `url's host ${host} is not on a public address (push.allowPrivateNetworks is off)`;
  return undefined;
}

/** The URL's host as an address or name: brackets off an IPv6 literal. */
function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

export class WebhookRefused extends Error {}

/**
 * A `lookup` for node's sockets that fails unless every address the name resolves to is
 * public: the socket connects to one of the addresses checked here, never to another answer.
 */
function publicOnlyLookup(
  hostname: string,
  options: LookupOptions,
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    if (addresses.length === 0 || !addresses.every((a) => isPublicAddress(a.address)))
      return callback(new WebhookRefused(`${hostname} resolves to an address that is not public`), []);
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}

export interface WebhookPost {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivate: boolean;
  signal?: AbortSignal;
}

/**
 * Sockets kept open to receivers between deliveries: a pool per receiver (host and port), so a
 * receiver's next delivery skips the TCP (and TLS) handshake. Bounded: 32 sockets per receiver
 * and 128 in all (the deliverer makes at most 32 POSTs at once), and an idle one is closed after
 * 30 s, so a thousand receivers seen once hold no thousand sockets.
 */
const POOL = { keepAlive: true, maxSockets: 32, maxTotalSockets: 128, maxFreeSockets: 32, timeout: 30_000 };
const agents = { http: new HttpAgent(POOL), https: new HttpsAgent(POOL) };

/** POSTs `body`; resolves on a 2xx answer, rejects (with a message naming no secret) otherwise. */
export function postWebhook(post: WebhookPost): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const url = new URL(post.url);
    const host = hostOf(url);
    if (!post.allowPrivate && isIP(host) && !isPublicAddress(host))
      return reject(new WebhookRefused(`${host} is not a public address`));
    const secure = url.protocol === 'https:';
    const options: RequestOptions = {
      method: 'POST',
      headers: withTraceHeaders({ ...post.headers, 'Content-Length': Buffer.byteLength(post.body) }),
      agent: secure ? agents.https : agents.http,
      signal: post.signal,
      ...(post.allowPrivate ? {} : { lookup: publicOnlyLookup as RequestOptions['lookup'] }),
    };
    const request = (secure ? httpsRequest : httpRequest)(url, options, (response) => {
      response.resume();
      const status = response.statusCode ?? 0;
      response.on('end', () => {
        clearTimeout(timer);
        if (status >= 200 && status < 300) resolve();
        else reject(new Error(`the receiver answered HTTP ${status}`));
      });
      response.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
    const timer = setTimeout(() => request.destroy(new Error(`no answer within ${post.timeoutMs} ms`)), post.timeoutMs);
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end(post.body);
  });
}
