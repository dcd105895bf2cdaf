import { createDecipheriv, randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { checkSecretFormat } from '../../functions/shared/secret-formats';
import { bindingVariable } from '../../lib/bindings';
import { type SecretsLocal, startSecretsLocal } from '../../lib/local/secrets-local';

/**
 * Webhook signing secrets at rest: sealed with the `webhook-key` secret, which the functions read
 * from Secrets Manager at run time. Each case runs the real `SecretsManagerClient` against the
 * secrets stand-in holding (or not holding) a key, and checks the ciphertext with its own AES-GCM.
 */

type Encrypted = { secretCiphertext: string; secretIv: string };
const servers: SecretsLocal[] = [];

/** The secrets module, loaded afresh against a stand-in that holds `key` (or no key at all). */
async function secretsWith(key: string | undefined) {
  const server = await startSecretsLocal(key === undefined ? {} : { 'webhook-key': key });
  servers.push(server);
  vi.resetModules();
  vi.stubEnv('AWS_ENDPOINT_URL_SECRETS_MANAGER', server.endpoint);
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
  vi.stubEnv(bindingVariable('secret:webhook-key'), server.arns['webhook-key']);
  return import('#domain/webhooks/secrets');
}

afterEach(() => {
  vi.unstubAllEnvs();
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
});

describe('sealSecret and openSecret without the webhook-key secret', () => {
  it('stores the plaintext and opens it again', async () => {
    // Prepare
    const secrets = await secretsWith(undefined);

    // Act
    const stored = await secrets.sealSecret('plain-secret-value');

    // Assess
    expect(stored).toEqual({ secret: 'plain-secret-value' });
    expect(await secrets.openSecret(stored)).toBe('plain-secret-value');
  });

  it('refuses to open an encrypted secret, naming the missing secret', async () => {
    // Prepare
    const secrets = await secretsWith(undefined);
    const stored = { secretCiphertext: randomBytes(40).toString('base64'), secretIv: randomBytes(12).toString('base64') };

    // Act
    const opening = secrets.openSecret(stored);

    // Assess
    await expect(opening).rejects.toThrow(/webhook-key/);
  });
});

describe.each([
  { format: '64 hex characters', encode: (key: Buffer) => key.toString('hex') },
  { format: '43 base64 characters', encode: (key: Buffer) => key.toString('base64').replace(/=+$/, '') },
])('sealSecret and openSecret with the webhook-key secret as $format', ({ encode }) => {
  const key = randomBytes(32);
  let secrets: Awaited<ReturnType<typeof secretsWith>>;
  beforeAll(async () => {
    secrets = await secretsWith(encode(key));
  });

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
      // Act
      const stored = await secrets.sealSecret(secret);

      // Assess
      expect(stored).not.toHaveProperty('secret');
      expect(Buffer.from((stored as Encrypted).secretIv, 'base64')).toHaveLength(12);
      expect(JSON.stringify(stored)).not.toContain(secret);
      expect(decrypt(stored as Encrypted)).toBe(secret);
      expect(await secrets.openSecret(stored)).toBe(secret);
    },
  );

  it('uses a fresh IV each time', async () => {
    // Act
    const [first, second] = (await Promise.all([secrets.sealSecret('same secret'), secrets.sealSecret('same secret')])) as Encrypted[];

    // Assess
    expect(first?.secretIv).not.toBe(second?.secretIv);
    expect(first?.secretCiphertext).not.toBe(second?.secretCiphertext);
  });

  it('refuses a tampered ciphertext (the GCM tag fails)', async () => {
    // Prepare
    const stored = (await secrets.sealSecret('tamper-me-please')) as Encrypted;
    const bytes = Buffer.from(stored.secretCiphertext, 'base64');
    bytes[0] = (bytes[0] as number) ^ 1;

    // Act
    const opening = secrets.openSecret({ ...stored, secretCiphertext: bytes.toString('base64') });

    // Assess
    await expect(opening).rejects.toThrow();
  });

  it('still opens a plaintext secret stored before the key was set', async () => {
    // Act
    const opened = await secrets.openSecret({ secret: 'stored-before-the-key' });

    // Assess
    expect(opened).toBe('stored-before-the-key');
  });
});

describe('the webhook-key format', () => {
  it.each([
    { case: '64 hex characters', value: () => randomBytes(32).toString('hex') },
    { case: '64 upper-case hex characters', value: () => randomBytes(32).toString('hex').toUpperCase() },
    { case: '43 base64 characters', value: () => randomBytes(32).toString('base64').replace(/=+$/, '') },
    { case: '43 base64 characters and the padding', value: () => randomBytes(32).toString('base64') },
  ])('accepts $case', ({ value }) => {
    // Prepare
    const key = value();

    // Act
    const checked = checkSecretFormat('webhook-key', key);

    // Assess
    expect(checked).toBe(key);
  });

  it.each([
    { case: 'too short', value: 'abc' },
    { case: '63 hex characters', value: 'a'.repeat(63) },
    { case: '65 hex characters', value: 'a'.repeat(65) },
    { case: '64 characters that are not hex', value: 'g'.repeat(64) },
    { case: '16 bytes in base64', value: randomBytes(16).toString('base64') },
    { case: '48 bytes in base64', value: randomBytes(48).toString('base64') },
  ])('refuses $case, naming the secret', ({ value }) => {
    // Act
    const check = () => checkSecretFormat('webhook-key', value);

    // Assess
    expect(check).toThrow(/webhook-key/);
  });

  it('refuses a stored key of the wrong format when a function reads it', async () => {
    // Prepare
    const secrets = await secretsWith('not-a-key');

    // Act
    const sealing = secrets.sealSecret('anything');

    // Assess
    await expect(sealing).rejects.toThrow(/webhook-key/);
  });
});
