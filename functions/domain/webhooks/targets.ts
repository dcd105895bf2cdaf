import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import { config } from '#shared/config';
import { BadRequestError } from '#shared/errors';

/** IPv4 ranges a webhook may never reach on AWS: private, loopback, link-local (metadata), CGNAT, ... */
const BLOCKED_V4: readonly [number, number][] = [
  [0x00000000, 8], // 0.0.0.0/8
  [0x0a000000, 8], // 10/8
  [0x64400000, 10], // 100.64/10 carrier-grade NAT
  [0x7f000000, 8], // loopback
  [0xa9fe0000, 16], // 169.254/16 link-local, instance metadata
  [0xac100000, 12], // 172.16/12
  [0xc0000000, 24], // 192.0.0/24
  [0xc0a80000, 16], // 192.168/16
  [0xc6120000, 15], // 198.18/15 benchmarking
  [0xe0000000, 3], // multicast and reserved
];

function ipv4ToInt(address: string): number {
  return address.split('.').reduce((value, octet) => (value << 8) + Number(octet), 0) >>> 0;
}

/** True for addresses a server-side fetch must not reach (SSRF): see the ranges above and their IPv6 kin. */
export function isPrivateAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return isPrivateAddress(mapped);
  if (isIP(address) === 4) {
    const value = ipv4ToInt(address);
    return BLOCKED_V4.some(([base, bits]) => (value & (bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0)) >>> 0 === base);
  }
  const lower = address.toLowerCase();
  return (
    lower === '::' ||
    lower === '::1' ||
    lower.startsWith('fe8') ||
    lower.startsWith('fe9') ||
    lower.startsWith('fea') ||
    lower.startsWith('feb') ||
    lower.startsWith('fc') ||
    lower.startsWith('fd') ||
    lower.startsWith('fd00:ec2')
  );
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
