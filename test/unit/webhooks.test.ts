import { createHmac } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { delayAfterAttemptMs, FIRST_ATTEMPT_HOLD_MS, RETRY_DELAYS_SECONDS } from '#domain/webhooks/deliveries';
import { signBody, verifySignature } from '#domain/webhooks/signing';
import { isPrivateAddress } from '#shared/outbound-guard';
import { eventSubscribers } from '#wiring';

/**
 * Pure parts of outbound webhooks: the SSRF address check, signing and verification, and the retry
 * schedule. The unit project has no time scale, so the module is also loaded afresh with one where
 * a case needs it (secret storage has its own file, with the secrets stand-in).
 */

/** Loads a webhook module again with extra settings (config is parsed when a module is first imported). */
async function withSettings<T>(env: Record<string, string>, load: () => Promise<T>): Promise<T> {
  vi.resetModules();
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  return load();
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('isPrivateAddress', () => {
  describe.each([
    {
      family: 'IPv4 private, loopback, link-local and reserved',
      expected: true,
      addresses: [
        '0.0.0.0',
        '10.0.0.1',
        '10.255.255.255',
        '100.64.0.1',
        '100.127.255.255',
        '127.0.0.1',
        '127.255.255.254',
        '169.254.169.254',
        '172.16.0.1',
        '172.31.255.255',
        '192.0.0.8',
        '192.168.0.1',
        '198.18.0.1',
        '198.19.255.255',
        '224.0.0.1',
        '255.255.255.255',
      ],
    },
    {
      family: 'IPv4 public, including the neighbours of each range',
      expected: false,
      addresses: [
        '1.1.1.1',
        '8.8.8.8',
        '9.255.255.255',
        '11.0.0.0',
        '100.63.255.255',
        '100.128.0.0',
        '126.255.255.255',
        '128.0.0.0',
        '169.253.255.255',
        '169.255.0.0',
        '172.15.255.255',
        '172.32.0.0',
        '192.167.255.255',
        '192.169.0.0',
        '198.17.255.255',
        '198.20.0.0',
        '223.255.255.255',
      ],
    },
    {
      family: 'IPv6 loopback, unspecified, link-local and unique-local',
      expected: true,
      addresses: ['::1', '::', 'fe80::1', 'FE80::abcd', 'febf::1', 'fc00::1', 'fd12:3456::1', 'fd00:ec2::254'],
    },
    { family: 'IPv6 public', expected: false, addresses: ['2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001::200e'] },
    {
      family: 'IPv4-mapped IPv6 of private addresses, dotted',
      expected: true,
      addresses: ['::ffff:127.0.0.1', '::ffff:10.1.2.3', '::FFFF:169.254.169.254', '::ffff:192.168.1.1'],
    },
    // The form URL parsing produces: new URL('https://[::ffff:127.0.0.1]/').hostname is '[::ffff:7f00:1]'.
    {
      family: 'IPv4-mapped IPv6 of private addresses, hex',
      expected: true,
      addresses: ['::ffff:7f00:1', '::ffff:a9fe:a9fe', '::ffff:a00:1', '::ffff:c0a8:101'],
    },
    { family: 'IPv4-mapped IPv6 of public addresses', expected: false, addresses: ['::ffff:8.8.8.8', '::ffff:808:808', '::ffff:1.1.1.1'] },
  ])('$family', ({ expected, addresses }) => {
    it.each(addresses)(`%s → ${expected}`, (address) => {
      // Act
      const result = isPrivateAddress(address);

      // Assess
      expect(result).toBe(expected);
    });
  });
});

describe('signBody', () => {
  it('is the lowercase hex HMAC-SHA256 of the body (RFC 4231-style known vector)', () => {
    // Act
    const signature = signBody('key', 'The quick brown fox jumps over the lazy dog');

    // Assess
    expect(signature).toBe('f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8');
  });

  it('signs the UTF-8 bytes of the body', () => {
    // Prepare
    const body = '{"content":"héllo ✓ 🎉"}';

    // Act
    const signature = signBody('secret', body);

    // Assess
    expect(signature).toBe(createHmac('sha256', 'secret').update(Buffer.from(body, 'utf8')).digest('hex'));
    expect(signature).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('verifySignature', () => {
  const secret = 'unit-secret-0123456789';
  const body = '{"type":"message.created","payload":{"content":"hi"}}';
  const good = createHmac('sha256', secret).update(body).digest('hex');

  it('accepts the signature of the body made with the secret', () => {
    // Act
    const valid = verifySignature(secret, body, good);

    // Assess
    expect(valid).toBe(true);
  });

  it.each([
    { case: 'a tampered body', secret, body: body.replace('hi', 'ho'), signature: good },
    { case: 'a body with trailing whitespace', secret, body: `${body}\n`, signature: good },
    { case: 'another secret', secret: `${secret}!`, body, signature: good },
    { case: 'one hex digit changed', secret, body, signature: `${good.slice(0, -1)}${good.endsWith('0') ? '1' : '0'}` },
    { case: 'the signature of an empty body', secret, body, signature: createHmac('sha256', secret).update('').digest('hex') },
  ])('rejects $case', ({ secret: key, body: payload, signature }) => {
    // Act
    const valid = verifySignature(key, payload, signature);

    // Assess
    expect(valid).toBe(false);
  });

  it.each([
    { case: 'an empty string', signature: '' },
    { case: 'non-hex characters', signature: 'z'.repeat(64) },
    { case: '63 characters', signature: good.slice(0, 63) },
    { case: '65 characters', signature: `${good}0` },
    { case: 'twice the length', signature: `${good}${good}` },
    { case: 'a sha256= prefix', signature: `sha256=${good}` },
    { case: 'surrounding spaces', signature: ` ${good} ` },
    { case: 'base64', signature: Buffer.from(good, 'hex').toString('base64') },
  ])('returns false, without throwing, for a malformed signature: $case', ({ signature }) => {
    // Act
    const check = () => verifySignature(secret, body, signature);

    // Assess
    expect(check).not.toThrow();
    expect(check()).toBe(false);
  });
});

describe('delayAfterAttemptMs', () => {
  it('waits 60 s, 5 min, 30 min and 60 min after attempts 1 to 4, and 60 min after any later one', () => {
    // Act
    const delays = [1, 2, 3, 4, 5, 6, 10].map(delayAfterAttemptMs);

    // Assess
    expect(RETRY_DELAYS_SECONDS).toEqual([60, 300, 1800, 3600]);
    expect(delays).toEqual([60_000, 300_000, 1_800_000, 3_600_000, 3_600_000, 3_600_000, 3_600_000]);
  });

  it.each([0.0005, 0.01, 0.5])('keeps the proportions 1 : 5 : 30 : 60 with WEBHOOK_RETRY_TIME_SCALE=%s', async (scale) => {
    // Prepare
    const scaled = await withSettings({ WEBHOOK_RETRY_TIME_SCALE: String(scale) }, () => import('#domain/webhooks/deliveries'));

    // Act
    const delays = [1, 2, 3, 4].map(scaled.delayAfterAttemptMs);

    // Assess
    expect(delays).toEqual([60_000, 300_000, 1_800_000, 3_600_000].map((ms) => Math.round(ms * scale)));
    expect(delays.map((delay) => delay / (delays[0] as number))).toEqual([1, 5, 30, 60]);
  });
});

describe('the hold of a first attempt', () => {
  it('outlasts any dispatcher invocation and runs out before the event comes back after a crash', () => {
    // Arrange
    const dispatcher = eventSubscribers.find((subscriber) => subscriber.id === 'WebhookDispatcher');

    // Assess
    expect(FIRST_ATTEMPT_HOLD_MS).toBeGreaterThanOrEqual((dispatcher?.timeoutSeconds ?? Number.POSITIVE_INFINITY) * 1000);
    expect(FIRST_ATTEMPT_HOLD_MS).toBeLessThan((dispatcher?.visibilityTimeoutSeconds ?? 0) * 1000);
  });
});
