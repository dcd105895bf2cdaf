import { lookup as dnsLookup, type LookupAddress, type LookupAllOptions } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { config } from '#shared/config';
import { BadRequestError } from '#shared/errors';
import { parseClientUrl } from '#shared/urls';

/**
 * The SSRF guard for user-supplied URLs (webhook targets, later web push endpoints): which hosts a
 * request from the service may never reach, by name and by address, at registration and again when
 * connecting. Provider base URLs from settings do not pass through it (`functions/shared/outbound.ts`).
 */

/** The `code` of the error the guarded lookup hands to the socket; `send()` reports it as `private_address`. */
export const PRIVATE_ADDRESS_ERROR_CODE = 'EPRIVATEADDRESS';

/** A blocked network: its first address, prefix length and family. */
export interface BlockedRange {
  readonly network: string;
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

const ipv4 = (network: string, prefix: number): BlockedRange => ({ network, prefix, family: 'ipv4' });
const ipv6 = (network: string, prefix: number): BlockedRange => ({ network, prefix, family: 'ipv6' });

/**
 * Addresses a request may never reach on AWS: private, loopback, link-local (instance metadata),
 * CGNAT, documentation, benchmarking, multicast and reserved ranges, and their IPv6 kin, including
 * the IPv6 forms that carry an IPv4 address a relay or the kernel may route to (IPv4-compatible,
 * IPv4-translated, NAT64, 6to4, Teredo). `BlockList` also matches IPv4-mapped IPv6 addresses
 * (`::ffff:7f00:1`) against the IPv4 rules, so a mapped public address stays allowed. Exported so
 * the tests put one address of every range to the guard, a range added later included.
 */
export const BLOCKED_RANGES: readonly BlockedRange[] = [
  ipv4('0.0.0.0', 8),
  ipv4('10.0.0.0', 8),
  ipv4('100.64.0.0', 10),
  ipv4('127.0.0.0', 8),
  ipv4('169.254.0.0', 16),
  ipv4('172.16.0.0', 12),
  ipv4('192.0.0.0', 24),
  ipv4('192.0.2.0', 24),
  ipv4('192.88.99.0', 24),
  ipv4('192.168.0.0', 16),
  ipv4('198.18.0.0', 15),
  ipv4('198.51.100.0', 24),
  ipv4('203.0.113.0', 24),
  // Multicast and the reserved 240/4, up to the broadcast address.
  ipv4('224.0.0.0', 3),
  // Unspecified, loopback and IPv4-compatible (`::127.0.0.1`, deprecated, never public).
  ipv6('::', 96),
  // IPv4-translated (SIIT, `::ffff:0:a9fe:a9fe`): a translator hands it to the IPv4 address it carries.
  ipv6('::ffff:0:0:0', 96),
  // NAT64, well-known and local-use (`64:ff9b:1::a9fe:a9fe` reaches 169.254.169.254 through a translator).
  ipv6('64:ff9b::', 96),
  ipv6('64:ff9b:1::', 48),
  // Discard-only.
  ipv6('100::', 64),
  // Teredo, then documentation; 6to4 below.
  ipv6('2001::', 32),
  ipv6('2001:db8::', 32),
  ipv6('2002::', 16),
  // Unique local, link-local, the deprecated site-local, multicast.
  ipv6('fc00::', 7),
  ipv6('fe80::', 10),
  ipv6('fec0::', 10),
  ipv6('ff00::', 8),
];

const blocked = new BlockList();
for (const { network, prefix, family } of BLOCKED_RANGES) blocked.addSubnet(network, prefix, family);

/**
 * Names that only ever mean this machine or a private network: RFC 6761 `localhost`, mDNS `.local`,
 * ICANN's reserved `.internal` (where AWS puts its private DNS names), `home.arpa`, and the
 * suffixes routers and corporate resolvers answer for.
 */
const PRIVATE_NAMES = new Set(['localhost', 'localhost.localdomain', 'ip6-localhost', 'ip6-loopback']);
const PRIVATE_SUFFIXES = ['localhost', 'local', 'localdomain', 'internal', 'home.arpa', 'lan', 'intranet', 'corp', 'private'];

/** Behaviour of the guard; every field has the service's default, tests and special callers set them. */
export interface GuardOptions {
  /**
   * Allow private, loopback and link-local targets (the local runtime, where receivers live on loopback).
   * @default config.WEBHOOK_ALLOW_PRIVATE_TARGETS
   */
  readonly allowPrivate?: boolean;
  /**
   * Resolves a name at connect time; always called with `all: true`.
   * @default dns.lookup
   */
  readonly resolve?: (
    hostname: string,
    options: LookupAllOptions,
    callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
  ) => void;
}

const allowsPrivate = (options: GuardOptions) => options.allowPrivate ?? config.WEBHOOK_ALLOW_PRIVATE_TARGETS;

/** True for addresses a server-side request must not reach (SSRF). Anything that is not an IP address is false. */
export function isPrivateAddress(address: string): boolean {
  // A zone id (`fe80::1%eth0`) only ever names a local interface.
  if (address.includes('%')) return isIP(address) !== 0;
  const family = isIP(address);
  if (family === 0) return false;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The host the way the WHATWG URL parser sees it (lowercase, IDNA-mapped, percent-decoded, IPv4 in
 * any spelling made dotted: `2130706433`, `0x7f.1` and `127.1` are all `127.0.0.1`), without IPv6
 * brackets or trailing dots; `undefined` when it is not a valid host at all.
 */
function canonicalHost(hostname: string): string | undefined {
  const bare = hostname.replace(/^\[|\]$/g, '');
  try {
    const parsed = new URL(`http://${isIP(bare) === 6 ? `[${bare}]` : bare}/`).hostname;
    return parsed.replace(/^\[|\]$/g, '').replace(/\.+$/, '');
  } catch {
    return undefined;
  }
}

/**
 * True when a host names a private target, by name or as a literal address: `localhost` and
 * `*.localhost`, `*.local`, `*.internal`, `*.home.arpa` and the like (with or without the trailing
 * dot), a single-label name (resolved through the search domains of the VPC, so always internal),
 * and private addresses in any spelling. A host that does not parse is refused too.
 */
export function isPrivateHostname(hostname: string): boolean {
  const host = canonicalHost(hostname);
  if (host === undefined || host === '') return true;
  if (isIP(host) !== 0) return isPrivateAddress(host);
  if (PRIVATE_NAMES.has(host) || !host.includes('.')) return true;
  return PRIVATE_SUFFIXES.some((suffix) => host === suffix || host.endsWith(`.${suffix}`));
}

/**
 * The check made before connecting to a user-supplied URL: true when its host is private by name
 * or literal address and private targets are not allowed. Literals must be refused here because
 * Node connects to an IP address without calling `lookup`; names are refused here so that a
 * private name fails the same way whether or not it resolves.
 */
export function isRefusedTarget(url: URL | string, options: GuardOptions = {}): boolean {
  if (allowsPrivate(options)) return false;
  const { hostname } = typeof url === 'string' ? new URL(url) : url;
  return isPrivateHostname(hostname);
}

/**
 * A `lookup` for `http.request` that resolves every address of a name and refuses them all when
 * one is private, so a DNS answer (including one rebound between registration and delivery)
 * cannot steer a request inside the VPC: the socket connects only to an address checked here.
 */
export function createGuardedLookup(options: GuardOptions = {}): LookupFunction {
  const resolve = options.resolve ?? dnsLookup;
  const allowPrivate = allowsPrivate(options);
  return (hostname, lookupOptions, callback) => {
    resolve(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      if (!allowPrivate && addresses.some((entry) => isPrivateAddress(entry.address))) {
        const refused: NodeJS.ErrnoException = new Error(`${hostname} resolves to a private address`);
        refused.code = PRIVATE_ADDRESS_ERROR_CODE;
        return callback(refused, []);
      }
      if (lookupOptions.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The rule for a user-supplied URL when it is stored (webhook registration): https, or plain http
 * to a loopback host when private targets are allowed (local runtime); no credentials; and, with
 * private targets not allowed, no private host by name or literal address. Resolved addresses are
 * checked again at every connection (`createGuardedLookup`).
 * @throws BadRequestError `webhook_url_not_https`, `webhook_url_private`, or `validation_failed`
 */
export function assertAllowedTargetUrl(
  value: string,
  field = 'body.url',
  options: GuardOptions = {},
  naming: { readonly what: string; readonly code: 'webhook_url' | 'push_endpoint' } = { what: 'Webhook URLs', code: 'webhook_url' },
): URL {
  const url = parseClientUrl(value);
  if (!url) throw new BadRequestError(`${naming.what} must be valid absolute URLs`, [{ field, message: 'must be an absolute https URL' }]);
  const allowPrivate = allowsPrivate(options);
  const httpToLoopback = url.protocol === 'http:' && allowPrivate && LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !httpToLoopback) {
    throw new BadRequestError(
      `${naming.what} must use https`,
      [{ field, message: 'must use https (http only to loopback in local mode)' }],
      `${naming.code}_not_https` as const,
    );
  }
  if (url.username || url.password)
    throw new BadRequestError(`${naming.what} may not carry credentials`, [{ field, message: 'no user:password@' }]);
  if (isRefusedTarget(url, { allowPrivate })) {
    throw new BadRequestError(
      `${naming.what} may not target private, loopback or link-local addresses`,
      [{ field, message: 'private address' }],
      `${naming.code}_private` as const,
    );
  }
  return url;
}
