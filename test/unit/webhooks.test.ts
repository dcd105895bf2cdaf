import { createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { delayAfterAttemptMs, RETRY_DELAYS_SECONDS } from '#domain/webhooks/deliveries';
import { openSecret, sealSecret } from '#domain/webhooks/secrets';
import { signBody, verifySignature } from '#domain/webhooks/signing';
import { isPrivateAddress } from '#domain/webhooks/targets';

/**
 * Pure parts of outbound webhooks: the SSRF address check, signing and verification, the retry
 * schedule and the secret storage. The unit project has no encryption key and no time scale, so
 * the modules are also loaded afresh with those settings where a case needs them.
 */

/** Loads a webhook module again with extra settings (config is parsed when a module is first imported). */
async function withSettings<T>(env: Record<string, string>, load: () => Promise<T>): Promise<T> {
  vi.resetModules();
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  return load();
}

type Encrypted = { secretCiphertext: string; secretIv: string };

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

describe('sealSecret and openSecret without WEBHOOK_SECRET_ENCRYPTION_KEY', () => {
  it('stores the plaintext and opens it again', () => {
    // Act
    const stored = sealSecret('plain-secret-value');

    // Assess
    expect(stored).toEqual({ secret: 'plain-secret-value' });
    expect(openSecret(stored)).toBe('plain-secret-value');
  });

  it('refuses to open an encrypted secret, naming the missing setting', () => {
    // Prepare
    const stored = { secretCiphertext: randomBytes(40).toString('base64'), secretIv: randomBytes(12).toString('base64') };

    // Act
    const open = () => openSecret(stored);

    // Assess
    expect(open).toThrow(/WEBHOOK_SECRET_ENCRYPTION_KEY/);
  });
});

describe.each([
  { format: '64 hex characters', encode: (key: Buffer) => key.toString('hex') },
  { format: '43 base64 characters', encode: (key: Buffer) => key.toString('base64').replace(/=+$/, '') },
])('sealSecret and openSecret with WEBHOOK_SECRET_ENCRYPTION_KEY as $format', ({ encode }) => {
  const key = randomBytes(32);
  const load = () => withSettings({ WEBHOOK_SECRET_ENCRYPTION_KEY: encode(key) }, () => import('#domain/webhooks/secrets'));

  /** The test's own AES-256-GCM: 12-byte IV, tag in the last 16 bytes of the ciphertext. */
  function decrypt(stored: Encrypted): string {
    const sealed = Buffer.from(stored.secretCiphertext, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(stored.secretIv, 'base64'));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]).toString('utf8');
  }

  it.each(['a-webhook-secret-0123456789', 'ünïcødé secret ✓', 'x'.repeat(256)])(
    'seals %s as AES-256-GCM ciphertext the key opens, and round-trips',
    async (secret) => {
      // Prepare
      const secrets = await load();

      // Act
      const stored = secrets.sealSecret(secret);

      // Assess
      expect(stored).not.toHaveProperty('secret');
      expect(Buffer.from((stored as Encrypted).secretIv, 'base64')).toHaveLength(12);
      expect(JSON.stringify(stored)).not.toContain(secret);
      expect(decrypt(stored as Encrypted)).toBe(secret);
      expect(secrets.openSecret(stored)).toBe(secret);
    },
  );

  it('uses a fresh IV each time', async () => {
    // Prepare
    const secrets = await load();

    // Act
    const [first, second] = [secrets.sealSecret('same secret'), secrets.sealSecret('same secret')] as {
      secretCiphertext: string;
      secretIv: string;
    }[];

    // Assess
    expect(first?.secretIv).not.toBe(second?.secretIv);
    expect(first?.secretCiphertext).not.toBe(second?.secretCiphertext);
  });

  it('refuses a tampered ciphertext (the GCM tag fails)', async () => {
    // Prepare
    const secrets = await load();
    const stored = secrets.sealSecret('tamper-me-please') as Encrypted;
    const bytes = Buffer.from(stored.secretCiphertext, 'base64');
    bytes[0] = (bytes[0] as number) ^ 1;

    // Act
    const open = () => secrets.openSecret({ ...stored, secretCiphertext: bytes.toString('base64') });

    // Assess
    expect(open).toThrow();
  });

  it('still opens a plaintext secret stored before the key was set', async () => {
    // Prepare
    const secrets = await load();

    // Act
    const opened = secrets.openSecret({ secret: 'stored-before-the-key' });

    // Assess
    expect(opened).toBe('stored-before-the-key');
  });
});

describe('WEBHOOK_SECRET_ENCRYPTION_KEY in the config', () => {
  it.each([
    { case: '64 hex characters', value: () => randomBytes(32).toString('hex') },
    { case: '64 upper-case hex characters', value: () => randomBytes(32).toString('hex').toUpperCase() },
    { case: '43 base64 characters', value: () => randomBytes(32).toString('base64').replace(/=+$/, '') },
    { case: '43 base64 characters and the padding', value: () => randomBytes(32).toString('base64') },
  ])('accepts $case', async ({ value }) => {
    // Prepare
    const key = value();

    // Act
    const { config } = await withSettings({ WEBHOOK_SECRET_ENCRYPTION_KEY: key }, () => import('#shared/config'));

    // Assess
    expect(config.WEBHOOK_SECRET_ENCRYPTION_KEY).toBe(key);
  });

  it.each([
    { case: 'too short', value: 'abc' },
    { case: '63 hex characters', value: 'a'.repeat(63) },
    { case: '65 hex characters', value: 'a'.repeat(65) },
    { case: '64 characters that are not hex', value: 'g'.repeat(64) },
    { case: '16 bytes in base64', value: randomBytes(16).toString('base64') },
    { case: '48 bytes in base64', value: randomBytes(48).toString('base64') },
  ])('refuses $case, naming the setting', async ({ value }) => {
    // Act
    const loading = withSettings({ WEBHOOK_SECRET_ENCRYPTION_KEY: value }, () => import('#shared/config'));

    // Assess
    await expect(loading).rejects.toThrow(/WEBHOOK_SECRET_ENCRYPTION_KEY/);
  });
});
