import type { LookupAddress } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { HttpError } from '#shared/errors';
import { assertAllowedTargetUrl, createGuardedLookup, type GuardOptions, isRefusedTarget } from '#shared/outbound-guard';

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
