import { isStale, open, type SealBinding, type SealedValue, seal } from '#shared/sealing';
import { secretKeyRing } from '#shared/secrets';

/** What a registration (or a push configuration) stores for a customer's secret. */
export type StoredSecret = { secret: string } | SealedValue;

/** The `webhook-key` secret's keys, or `undefined` where it is not set (a local run without one). */
const webhookKeys = () => secretKeyRing('webhook-key');

/**
 * Secrets customers give the service (webhook secrets, push provider keys). With the `webhook-key`
 * secret: sealed under its current key, bound to `binding` (`functions/shared/sealing.ts`).
 * Without it, the spec's plaintext storage.
 */
export async function sealSecret(secret: string, binding: SealBinding): Promise<StoredSecret> {
  const ring = await webhookKeys();
  return ring ? seal(ring, secret, binding) : { secret };
}

export async function openSecret(
  stored: { secret?: string; secretCiphertext?: string; secretIv?: string; secretKeyId?: string },
  binding: SealBinding,
): Promise<string> {
  if (stored.secret !== undefined) return stored.secret;
  const ring = await webhookKeys();
  if (!ring || !stored.secretCiphertext || !stored.secretIv) {
    throw new Error('Webhook secret is encrypted but the webhook-key secret is not set');
  }
  return open(ring, stored as SealedValue, binding, 'webhook-key');
}

/**
 * The stored secret as it should be written again: sealed anew when it is plaintext while a key is
 * set, or sealed in the older format or under a key that is no longer current; else as it is.
 */
export async function resealed(stored: StoredSecret, binding: SealBinding): Promise<StoredSecret> {
  const ring = await webhookKeys();
  if (!ring) return stored;
  if ('secret' in stored) return seal(ring, stored.secret, binding);
  return isStale(ring, stored) ? seal(ring, open(ring, stored, binding, 'webhook-key'), binding) : stored;
}
