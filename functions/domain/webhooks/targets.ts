import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { config } from '#shared/config';
import { BadRequestError } from '#shared/errors';

/**
 * Addresses a webhook may never reach on AWS: private, loopback, link-local (instance metadata),
 * CGNAT, benchmarking, multicast and reserved ranges, and their IPv6 kin. `BlockList` also matches
 * IPv4-mapped IPv6 addresses (`::ffff:7f00:1`) against the IPv4 rules.
 */
const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(network, prefix, 'ipv6');
}

/** True for addresses a server-side request must not reach (SSRF). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return blocked.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The URL rule at registration: https, or plain http to a loopback host when private targets are
 * allowed (local runtime). With private targets not allowed, a literal private address is refused
 * here and every resolved address is checked again when connecting (`guardedLookup`).
 */
export function assertAllowedTargetUrl(value: string, field = 'body.url'): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new BadRequestError('url is not a valid URL', [{ field, message: 'must be an absolute https URL' }]);
  }
  const allowPrivate = config.WEBHOOK_ALLOW_PRIVATE_TARGETS;
  const httpToLoopback = url.protocol === 'http:' && allowPrivate && LOOPBACK_HOSTS.has(url.hostname);
  if (url.protocol !== 'https:' && !httpToLoopback) {
    throw new BadRequestError(
      'Webhook URLs must use https',
      [{ field, message: 'must use https (http only to loopback in local mode)' }],
      'webhook_url_not_https',
    );
  }
  if (url.username || url.password)
    throw new BadRequestError('Webhook URLs may not carry credentials', [{ field, message: 'no user:password@' }]);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && (host === 'localhost' || (isIP(host) && isPrivateAddress(host)))) {
    throw new BadRequestError(
      'Webhook URLs may not target private, loopback or link-local addresses',
      [{ field, message: 'private address' }],
      'webhook_url_private',
    );
  }
  return url;
}

/**
 * Refuses a URL whose host is a literal private address: Node connects to IP literals without
 * calling `lookup`, so `guardedLookup` alone would not see them.
 */
export function isRefusedLiteralHost(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return !config.WEBHOOK_ALLOW_PRIVATE_TARGETS && isIP(host) !== 0 && isPrivateAddress(host);
}

/**
 * A `lookup` for `http.request` that refuses private addresses after resolution, so DNS answers
 * (including rebinding between registration and delivery) cannot steer a delivery inside the VPC.
 */
export function guardedLookup(
  hostname: string,
  options: { all?: boolean; family?: number },
  callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const list = addresses as LookupAddress[];
    if (!config.WEBHOOK_ALLOW_PRIVATE_TARGETS && list.some((entry) => isPrivateAddress(entry.address))) {
      const refused: NodeJS.ErrnoException = new Error(`${hostname} resolves to a private address`);
      refused.code = 'EPRIVATEADDRESS';
      return callback(refused, []);
    }
    if (options.all) return callback(null, list);
    const first = list[0];
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
    callback(null, first.address, first.family);
  });
}
