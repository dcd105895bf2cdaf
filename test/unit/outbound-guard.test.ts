import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { HttpError } from '#shared/errors';
import {
  assertAllowedTargetUrl,
  BLOCKED_RANGES,
  type BlockedRange,
  createGuardedLookup,
  type GuardOptions,
  isPrivateAddress,
  isRefusedTarget,
} from '#shared/outbound-guard';

/**
 * The SSRF guard on user-supplied URLs, with private targets not allowed (the AWS setting): every
 * URL is put to the registration rule and to the check made before connecting, which must agree.
 */

const AWS: GuardOptions = { allowPrivate: false };

/** The error code the registration rule answers with, or `undefined` when it accepts the URL. */
function registrationCode(url: string, options: GuardOptions = AWS): string | undefined {
  try {
    assertAllowedTargetUrl(url, 'body.url', options);
    return undefined;
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return error.code;
  }
}

const REFUSED_BY_NAME = [
  'https://localhost/hook',
  'https://localhost./hook',
  'https://LOCALHOST:8443/hook',
  'https://a.localhost/hook',
  'https://a.localhost./hook',
  'https://deep.a.localhost/hook',
  'https://localhost.localdomain/hook',
  'https://localhost.localdomain./hook',
  'https://ip6-localhost/hook',
  'https://ip6-loopback./hook',
  'https://printer.local/hook',
  'https://x.internal/hook',
  'https://ip-10-0-0-1.ec2.internal./hook',
  'https://nas.home.arpa/hook',
  // A single label resolves through the VPC's search domains.
  'https://intranet/hook',
  // Spellings the URL parser turns into `localhost`.
  'https://%6cocalhost/hook',
  'https://ｌｏｃａｌｈｏｓｔ/hook',
];

const REFUSED_BY_LITERAL = [
  'https://127.0.0.1/hook',
  'https://127.0.0.1./hook',
  'https://2130706433/hook',
  'https://0x7f.1/hook',
  'https://127.1/hook',
  'https://0177.0.0.1/hook',
  'https://0.0.0.0/hook',
  'https://0/hook',
  'https://10.0.0.1/hook',
  'https://172.16.5.4/hook',
  'https://192.168.1.10/hook',
  'https://169.254.169.254/latest/meta-data/',
  'https://100.64.0.1/hook',
  'https://224.0.0.1/hook',
  'https://[::1]/hook',
  'https://[::]/hook',
  'https://[::ffff:127.0.0.1]/hook',
  'https://[::ffff:169.254.169.254]/hook',
  'https://[::127.0.0.1]/hook',
  'https://[2002:7f00:1::]/hook',
  'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook',
  'https://[64:ff9b::a9fe:a9fe]/hook',
  'https://[64:ff9b:1::a9fe:a9fe]/hook',
  'https://[::ffff:0:a9fe:a9fe]/hook',
  'https://[fec0::1]/hook',
  'https://[fd00:ec2::254]/hook',
  'https://[fe80::1]/hook',
  'https://[ff02::1]/hook',
];

const ACCEPTED = [
  'https://hooks.example.com/chat',
  'https://hooks.example.com./chat',
  'https://localhost.example.com/hook',
  'https://mylocalhost.com/hook',
  'https://internal.example.com/hook',
  'https://example.local.com/hook',
  'https://8.8.8.8/hook',
  'https://134744072/hook',
  'https://1.1/hook',
  'https://[2606:4700:4700::1111]/hook',
  'https://[2001:4860:4860::8888]/hook',
  'https://[::ffff:8.8.8.8]/hook',
];

/**
 * One address inside every range the guard must block, written out by hand: a range dropped from the
 * guard's list fails here, where the generated cases below would silently lose it.
 */
const ONE_ADDRESS_PER_REQUIRED_RANGE = [
  ['0.0.0.0/8', '0.1.2.3'],
  ['10.0.0.0/8', '10.200.0.1'],
  ['100.64.0.0/10', '100.127.255.254'],
  ['127.0.0.0/8', '127.9.9.9'],
  ['169.254.0.0/16', '169.254.169.254'],
  ['172.16.0.0/12', '172.31.0.1'],
  ['192.0.0.0/24', '192.0.0.9'],
  ['192.0.2.0/24', '192.0.2.10'],
  ['192.88.99.0/24', '192.88.99.1'],
  ['192.168.0.0/16', '192.168.255.1'],
  ['198.18.0.0/15', '198.19.0.1'],
  ['198.51.100.0/24', '198.51.100.7'],
  ['203.0.113.0/24', '203.0.113.200'],
  ['224.0.0.0/3', '239.255.255.250'],
  ['240.0.0.0/4 (in 224/3)', '255.255.255.255'],
  ['::/96', '::a9fe:a9fe'],
  ['::ffff:0:0:0/96', '::ffff:0:a9fe:a9fe'],
  ['64:ff9b::/96', '64:ff9b::7f00:1'],
  ['64:ff9b:1::/48', '64:ff9b:1::a9fe:a9fe'],
  ['100::/64', '100::1'],
  ['2001::/32', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
  ['2001:db8::/32', '2001:db8::1'],
  ['2002::/16', '2002:a9fe:a9fe::1'],
  ['fc00::/7', 'fd12:3456::1'],
  ['fe80::/10', 'fe80::1'],
  ['fec0::/10', 'fec0::1'],
  ['ff00::/8', 'ff02::1'],
] as const;

describe('every blocked range', () => {
  it.each(ONE_ADDRESS_PER_REQUIRED_RANGE)('%s: %s is private', (_range, address) => {
    // Act
    const isPrivate = isPrivateAddress(address);

    // Assess
    expect(isPrivate).toBe(true);
  });

  it.each(ONE_ADDRESS_PER_REQUIRED_RANGE)('%s: a URL to %s is refused at registration and before connecting', (_range, address) => {
    // Prepare
    const url = `https://${address.includes(':') ? `[${address}]` : address}/hook`;

    // Act
    const code = registrationCode(url);
    const refused = isRefusedTarget(url, AWS);

    // Assess
    expect(code).toBe('webhook_url_private');
    expect(refused).toBe(true);
  });

  const bits = (family: BlockedRange['family']) => (family === 'ipv4' ? 32 : 128);

  /** The address as a number, parsed here rather than by the `BlockList` under test. */
  function toNumber(address: string, family: BlockedRange['family']): bigint {
    if (family === 'ipv4') return address.split('.').reduce((sum, part) => (sum << 8n) + BigInt(part), 0n);
    const [head = '', tail = ''] = address.split('::');
    const groups = (text: string) => (text === '' ? [] : text.split(':'));
    const missing = 8 - groups(head).length - groups(tail).length;
    const all = address.includes('::') ? [...groups(head), ...Array(missing).fill('0'), ...groups(tail)] : groups(head);
    return all.reduce((sum, group) => (sum << 16n) + BigInt(`0x${group}`), 0n);
  }

  function toAddress(value: bigint, family: BlockedRange['family']): string {
    const parts: string[] = [];
    for (let shift = bits(family) - (family === 'ipv4' ? 8 : 16); shift >= 0; shift -= family === 'ipv4' ? 8 : 16) {
      const part = (value >> BigInt(shift)) & (family === 'ipv4' ? 0xffn : 0xffffn);
      parts.push(family === 'ipv4' ? part.toString(10) : part.toString(16));
    }
    return parts.join(family === 'ipv4' ? '.' : ':');
  }

  function bounds({ network, prefix, family }: BlockedRange) {
    const first = toNumber(network, family);
    const size = 1n << BigInt(bits(family) - prefix);
    return { first, last: first + size - 1n };
  }

  const covered = (value: bigint, family: BlockedRange['family']) =>
    BLOCKED_RANGES.some((range) => {
      if (range.family !== family) return false;
      const { first, last } = bounds(range);
      return value >= first && value <= last;
    });

  const generated = BLOCKED_RANGES.map((range) => ({ ...range, name: `${range.network}/${range.prefix}` }));

  it.each(generated)('$name: its first, second and last address are private', (range) => {
    // Prepare
    const { first, last } = bounds(range);
    const inside = [first, first + 1n, last].map((value) => toAddress(value, range.family));

    // Act
    const verdicts = inside.map((address) => [address, isPrivateAddress(address)]);

    // Assess
    expect(verdicts).toEqual(inside.map((address) => [address, true]));
  });

  it.each(generated.filter((range) => range.family === 'ipv4'))('$name: its IPv4-mapped IPv6 form is private too', (range) => {
    // Prepare
    const mapped = `::ffff:${toAddress(bounds(range).first + 1n, 'ipv4')}`;

    // Act
    const isPrivate = isPrivateAddress(mapped);

    // Assess
    expect(isPrivate).toBe(true);
  });

  it.each(generated)('$name: the address right after it is private only when another range covers it', (range) => {
    // Prepare: the prefix is no wider than listed.
    const after = bounds(range).last + 1n;
    if (after >= 1n << BigInt(bits(range.family))) return;
    const address = toAddress(after, range.family);

    // Act
    const isPrivate = isPrivateAddress(address);

    // Assess
    expect(isPrivate).toBe(covered(after, range.family));
  });
});

describe.each([
  { kind: 'by name', urls: REFUSED_BY_NAME },
  { kind: 'by literal address', urls: REFUSED_BY_LITERAL },
])('a user URL to a private host $kind', ({ urls }) => {
  it.each(urls)('%s is refused at registration with webhook_url_private', (url) => {
    // Act
    const code = registrationCode(url);

    // Assess
    expect(code).toBe('webhook_url_private');
  });

  it.each(urls)('%s is refused before connecting', (url) => {
    // Act
    const refused = isRefusedTarget(new URL(url), AWS);

    // Assess
    expect(refused).toBe(true);
  });

  it.each(urls)('%s is allowed when private targets are (the local runtime)', (url) => {
    // Act
    const refused = isRefusedTarget(url, { allowPrivate: true });

    // Assess
    expect(refused).toBe(false);
  });
});

describe('a user URL to a public host', () => {
  it.each(ACCEPTED)('%s is accepted at registration', (url) => {
    // Act
    const code = registrationCode(url);

    // Assess
    expect(code).toBeUndefined();
  });

  it.each(ACCEPTED)('%s is not refused before connecting', (url) => {
    // Act
    const refused = isRefusedTarget(url, AWS);

    // Assess
    expect(refused).toBe(false);
  });
});

describe('the rest of the registration rule', () => {
  it.each([
    { url: 'http://hooks.example.com/hook', options: AWS, expected: 'webhook_url_not_https' },
    { url: 'http://127.0.0.1:8080/hook', options: AWS, expected: 'webhook_url_not_https' },
    { url: 'http://hooks.example.com/hook', options: { allowPrivate: true }, expected: 'webhook_url_not_https' },
    { url: 'ftp://hooks.example.com/hook', options: AWS, expected: 'webhook_url_not_https' },
    { url: 'https://user:pass@hooks.example.com/hook', options: AWS, expected: 'validation_failed' },
    { url: 'not a url', options: AWS, expected: 'validation_failed' },
    { url: 'http://127.0.0.1:8080/hook', options: { allowPrivate: true }, expected: undefined },
    { url: 'http://localhost:8080/hook', options: { allowPrivate: true }, expected: undefined },
    { url: 'https://10.0.0.1/hook', options: { allowPrivate: true }, expected: undefined },
  ])('$url with allowPrivate=$options.allowPrivate → $expected', ({ url, options, expected }) => {
    // Act
    const code = registrationCode(url, options);

    // Assess
    expect(code).toBe(expected);
  });
});

describe('createGuardedLookup (the check at connect time, after DNS)', () => {
  /** Runs the guarded lookup over a resolver that answers `addresses` for any name. */
  function lookUp(addresses: string[], options: GuardOptions & { all?: boolean } = AWS) {
    const answers: LookupAddress[] = addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    const lookup = createGuardedLookup({
      ...options,
      resolve: (_hostname, _options, callback) => callback(null, answers),
    });
    return new Promise<{ error: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
      lookup('hooks.example.com', { all: options.all ?? true }, (error, address) => resolve({ error, address })),
    );
  }

  it.each([
    ['127.0.0.1'],
    ['10.0.0.7'],
    ['169.254.169.254'],
    ['::1'],
    ['::ffff:7f00:1'],
    ['2002:a00:1::1'],
    // One private answer among public ones is enough: the socket may pick any of them.
    ['93.184.215.14', '10.0.0.7'],
    ['2606:4700::1', 'fd00::1'],
  ])('refuses a name that resolves to %s (and the rest)', async (...addresses) => {
    // Act
    const { error } = await lookUp(addresses);

    // Assess
    expect(error?.code).toBe('EPRIVATEADDRESS');
    expect(error?.message).toBe('hooks.example.com resolves to a private address');
  });

  it.each([[['93.184.215.14']], [['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c']]])(
    'passes public answers %j through',
    async (addresses) => {
      // Act
      const { error, address } = await lookUp(addresses);

      // Assess
      expect(error).toBeNull();
      expect(address).toEqual(addresses.map((entry) => ({ address: entry, family: entry.includes(':') ? 6 : 4 })));
    },
  );

  it('answers the first address alone when asked without all', async () => {
    // Act
    const { error, address } = await lookUp(['93.184.215.14', '8.8.8.8'], { ...AWS, all: false });

    // Assess
    expect(error).toBeNull();
    expect(address).toBe('93.184.215.14');
  });

  it('passes private answers through when private targets are allowed', async () => {
    // Act
    const { error, address } = await lookUp(['127.0.0.1'], { allowPrivate: true });

    // Assess
    expect(error).toBeNull();
    expect(address).toEqual([{ address: '127.0.0.1', family: 4 }]);
  });
});
