import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { bindingVariable } from '#wiring/bindings';
import { checkSecretFormat } from '../../functions/shared/secret-formats';
import { type SecretsLocal, startSecretsLocal } from '../../lib/local/secrets-local';

/**
 * Webhook signing secrets at rest: sealed with the `webhook-key` secret, which the functions read
 * from Secrets Manager at run time. Each case runs the real `SecretsManagerClient` against the
 * secrets stand-in holding (or not holding) a key, and checks the ciphertext with its own AES-GCM:
 * bound to `webhook-secret|<projectId>|<webhookId>` as associated data, naming its key by id.
 */

type Encrypted = { secretCiphertext: string; secretIv: string; secretKeyId?: string };
const binding = { purpose: 'webhook-secret', projectId: 'prj-a', recordId: 'wh_prj-a_0123456789abcdef01234567' } as const;
const AAD = 'webhook-secret|prj-a|wh_prj-a_0123456789abcdef01234567';
/** The documented key id: the first 16 hex digits of SHA-256 over `chat-data-key-id`, a NUL and the key. */
const keyIdOf = (key: Buffer) =>
  createHash('sha256')
    .update(Buffer.concat([Buffer.from('chat-data-key-id\u0000'), key]))
    .digest('hex')
    .slice(0, 16);

/** A value as sealed before key ids and associated data: AES-256-GCM, nothing bound. */
function sealLegacy(key: Buffer, secret: string): Encrypted {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return { secretCiphertext: sealed.toString('base64'), secretIv: iv.toString('base64') };
}
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
    const stored = await secrets.sealSecret('plain-secret-value', binding);

    // Assess
    expect(stored).toEqual({ secret: 'plain-secret-value' });
    expect(await secrets.openSecret(stored, binding)).toBe('plain-secret-value');
  });

  it('refuses to open an encrypted secret, naming the missing secret', async () => {
    // Prepare
    const secrets = await secretsWith(undefined);
    const stored = { secretCiphertext: randomBytes(40).toString('base64'), secretIv: randomBytes(12).toString('base64') };

    // Act
    const opening = secrets.openSecret(stored, binding);

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
    decipher.setAAD(Buffer.from(AAD));
    decipher.setAuthTag(sealed.subarray(sealed.length - 16));
    return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]).toString('utf8');
  }

  it.each(['a-webhook-secret-0123456789', 'ünïcødé secret ✓', 'x'.repeat(256)])(
    'seals %s as AES-256-GCM ciphertext the key opens, and round-trips',
    async (secret) => {
      // Act
      const stored = await secrets.sealSecret(secret, binding);

      // Assess
      expect(stored).not.toHaveProperty('secret');
      expect((stored as Encrypted).secretKeyId).toBe(keyIdOf(key));
      expect(Buffer.from((stored as Encrypted).secretIv, 'base64')).toHaveLength(12);
      expect(JSON.stringify(stored)).not.toContain(secret);
      expect(decrypt(stored as Encrypted)).toBe(secret);
      expect(await secrets.openSecret(stored, binding)).toBe(secret);
    },
  );

  it('uses a fresh IV each time', async () => {
    // Act
    const [first, second] = (await Promise.all([
      secrets.sealSecret('same secret', binding),
      secrets.sealSecret('same secret', binding),
    ])) as Encrypted[];

    // Assess
    expect(first?.secretIv).not.toBe(second?.secretIv);
    expect(first?.secretCiphertext).not.toBe(second?.secretCiphertext);
  });

  it('refuses a tampered ciphertext (the GCM tag fails)', async () => {
    // Prepare
    const stored = (await secrets.sealSecret('tamper-me-please', binding)) as Encrypted;
    const bytes = Buffer.from(stored.secretCiphertext, 'base64');
    bytes[0] = (bytes[0] as number) ^ 1;

    // Act
    const opening = secrets.openSecret({ ...stored, secretCiphertext: bytes.toString('base64') }, binding);

    // Assess
    await expect(opening).rejects.toThrow();
  });

  it('still opens a plaintext secret stored before the key was set', async () => {
    // Act
    const opened = await secrets.openSecret({ secret: 'stored-before-the-key' }, binding);

    // Assess
    expect(opened).toBe('stored-before-the-key');
  });

  it.each([
    { case: "another project's registration", other: { ...binding, projectId: 'prj-b', recordId: 'wh_prj-b_0123456789abcdef01234567' } },
    { case: 'another registration of the same project', other: { ...binding, recordId: 'wh_prj-a_ffffffffffffffffffffffff' } },
    { case: 'another purpose on the same record', other: { ...binding, purpose: 'push-key' } as const },
  ])('refuses to open a value moved to $case', async ({ other }) => {
    // Prepare
    const stored = await secrets.sealSecret('bound-to-its-record', binding);

    // Act
    const opening = secrets.openSecret(stored, other);

    // Assess
    await expect(opening).rejects.toThrow(/does not open/);
  });

  it('opens a value sealed in the format before key ids (no key id, no associated data), and reseals it bound', async () => {
    // Prepare
    const legacy = sealLegacy(key, 'sealed-the-old-way');

    // Act
    const opened = await secrets.openSecret(legacy, binding);
    const resealed = (await secrets.resealed(legacy, binding)) as Encrypted;

    // Assess
    expect(opened).toBe('sealed-the-old-way');
    expect(resealed.secretKeyId).toBe(keyIdOf(key));
    expect(decrypt(resealed)).toBe('sealed-the-old-way');
  });

  it('refuses a bound value whose key id was stripped (no downgrade to the unbound format)', async () => {
    // Prepare
    const { secretKeyId: _, ...stripped } = (await secrets.sealSecret('no-downgrade', binding)) as Encrypted;

    // Act
    const opening = secrets.openSecret(stripped, { ...binding, projectId: 'prj-b' });

    // Assess
    await expect(opening).rejects.toThrow();
  });
});

describe('rotating the webhook-key secret to a key ring', () => {
  const oldKey = randomBytes(32);
  const newKey = randomBytes(32);

  it('opens values sealed under the previous key (bound, and in the older format) and seals new ones under the current key', async () => {
    // Prepare: values sealed while the secret held the old key alone.
    const before = await secretsWith(oldKey.toString('hex'));
    const boundBefore = (await before.sealSecret('sealed-before-rotation', binding)) as Encrypted;
    const legacyBefore = sealLegacy(oldKey, 'sealed-before-key-ids');
    const ring = JSON.stringify({ current: newKey.toString('hex'), previous: [oldKey.toString('base64')] });

    // Act
    const after = await secretsWith(ring);
    const openedBound = await after.openSecret(boundBefore, binding);
    const openedLegacy = await after.openSecret(legacyBefore, binding);
    const sealedAfter = (await after.sealSecret('sealed-after-rotation', binding)) as Encrypted;
    const moved = (await after.resealed(boundBefore, binding)) as Encrypted;

    // Assess
    expect(boundBefore.secretKeyId).toBe(keyIdOf(oldKey));
    expect(openedBound).toBe('sealed-before-rotation');
    expect(openedLegacy).toBe('sealed-before-key-ids');
    expect(sealedAfter.secretKeyId).toBe(keyIdOf(newKey));
    expect(await after.openSecret(sealedAfter, binding)).toBe('sealed-after-rotation');
    expect(moved.secretKeyId).toBe(keyIdOf(newKey));
    expect(await after.openSecret(moved, binding)).toBe('sealed-before-rotation');
  });

  it('refuses, naming the key id, a value whose key the ring no longer holds', async () => {
    // Prepare
    const before = await secretsWith(oldKey.toString('hex'));
    const sealed = await before.sealSecret('sealed-under-a-retired-key', binding);
    const after = await secretsWith(JSON.stringify({ current: newKey.toString('hex') }));

    // Act
    const opening = after.openSecret(sealed, binding);

    // Assess
    await expect(opening).rejects.toThrow(new RegExp(keyIdOf(oldKey)));
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

  it('accepts a key ring of the current key and previous ones, in either key format', () => {
    // Prepare
    const ring = JSON.stringify({ current: randomBytes(32).toString('hex'), previous: [randomBytes(32).toString('base64')] });

    // Act
    const checked = checkSecretFormat('webhook-key', ring);

    // Assess
    expect(checked).toBe(ring);
  });

  it.each([
    { case: 'too short', value: 'abc' },
    { case: 'a key ring without a current key', value: JSON.stringify({ previous: [randomBytes(32).toString('hex')] }) },
    {
      case: 'a key ring with a malformed previous key',
      value: JSON.stringify({ current: randomBytes(32).toString('hex'), previous: ['abc'] }),
    },
    { case: 'malformed JSON', value: '{"current":' },
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
    const sealing = secrets.sealSecret('anything', binding);

    // Assess
    await expect(sealing).rejects.toThrow(/webhook-key/);
  });
});

describe('keys the service generates (signing-key)', () => {
  /** The generated-keys module against a stand-in holding `key` as `signing-key` (or nothing). */
  async function generatedKeysWith(key: string | undefined) {
    const server = await startSecretsLocal(key === undefined ? {} : { 'signing-key': key });
    servers.push(server);
    vi.resetModules();
    vi.stubEnv('AWS_ENDPOINT_URL_SECRETS_MANAGER', server.endpoint);
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
    vi.stubEnv(bindingVariable('secret:signing-key'), server.arns['signing-key']);
    return import('#shared/generated-keys');
  }
  const signing = { purpose: 'project-signing-secret', projectId: 'prj-a', recordId: 'PROJECT' } as const;

  it('has no plaintext fallback: without the secret, sealing fails, naming it', async () => {
    // Prepare
    const keys = await generatedKeysWith(undefined);

    // Act
    const sealing = keys.sealGeneratedKey('a-generated-signing-secret', signing);

    // Assess
    await expect(sealing).rejects.toThrow(/signing-key/);
  });

  it("seals under the current key with the project's binding, and refuses the value on another project", async () => {
    // Prepare
    const key = randomBytes(32);
    const keys = await generatedKeysWith(key.toString('hex'));

    // Act
    const sealed = await keys.sealGeneratedKey('a-generated-signing-secret', signing);

    // Assess
    expect(sealed.secretKeyId).toBe(keyIdOf(key));
    expect(await keys.openGeneratedKey(sealed, signing)).toBe('a-generated-signing-secret');
    await expect(keys.openGeneratedKey(sealed, { ...signing, projectId: 'prj-b' })).rejects.toThrow(/does not open/);
    expect(await keys.generatedKeyIsStale(sealed)).toBe(false);
  });
});
