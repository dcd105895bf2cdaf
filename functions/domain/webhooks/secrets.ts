import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { secretValue } from '#shared/secrets';

/** What a registration stores for its secret. */
export type StoredSecret = { secret: string } | { secretCiphertext: string; secretIv: string };

const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The `webhook-key` secret as a 32-byte key, or `undefined` where it is not set (a local run without one). */
async function encryptionKey(): Promise<Buffer | undefined> {
  const raw = await secretValue('webhook-key');
  if (!raw) return undefined;
  return /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
}

/**
 * With the `webhook-key` secret: AES-256-GCM, a random 12-byte IV, ciphertext and tag stored
 * base64 together. Without it, the spec's plaintext storage.
 */
export async function sealSecret(secret: string): Promise<StoredSecret> {
  const key = await encryptionKey();
  if (!key) return { secret };
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return { secretCiphertext: sealed.toString('base64'), secretIv: iv.toString('base64') };
}

export async function openSecret(stored: { secret?: string; secretCiphertext?: string; secretIv?: string }): Promise<string> {
  if (stored.secret !== undefined) return stored.secret;
  const key = await encryptionKey();
  if (!key || !stored.secretCiphertext || !stored.secretIv) {
    throw new Error('Webhook secret is encrypted but the webhook-key secret is not set');
  }
  const sealed = Buffer.from(stored.secretCiphertext, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(stored.secretIv, 'base64'));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
}
