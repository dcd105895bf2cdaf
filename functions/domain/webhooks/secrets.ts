import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { config } from '#shared/config';

/** What a registration stores for its secret. */
export type StoredSecret = { secret: string } | { secretCiphertext: string; secretIv: string };

const IV_BYTES = 12;
const TAG_BYTES = 16;

function encryptionKey(): Buffer | undefined {
  const raw = config.WEBHOOK_SECRET_ENCRYPTION_KEY;
  if (!raw) return undefined;
  return /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
}

/**
 * With `WEBHOOK_SECRET_ENCRYPTION_KEY`: AES-256-GCM, a random 12-byte IV, ciphertext and tag
 * stored base64 together. Without it, the spec's plaintext storage.
 */
export function sealSecret(secret: string): StoredSecret {
  const key = encryptionKey();
  if (!key) return { secret };
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return { secretCiphertext: sealed.toString('base64'), secretIv: iv.toString('base64') };
}

export function openSecret(stored: { secret?: string; secretCiphertext?: string; secretIv?: string }): string {
  if (stored.secret !== undefined) return stored.secret;
  const key = encryptionKey();
  if (!key || !stored.secretCiphertext || !stored.secretIv) {
    throw new Error('Webhook secret is encrypted but WEBHOOK_SECRET_ENCRYPTION_KEY is not set');
  }
  const sealed = Buffer.from(stored.secretCiphertext, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(stored.secretIv, 'base64'));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
}
