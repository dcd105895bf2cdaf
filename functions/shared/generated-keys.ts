import { hkdfSync } from 'node:crypto';
import { isStale, type KeyRing, open, type SealBinding, type SealedValue, seal } from '#shared/sealing';
import { secretKeyRing } from '#shared/secrets';

/**
 * The keys the service generates itself (project JWT signing secrets, VAPID private keys), sealed
 * under the `signing-key` secret. Unlike customers' secrets they have no plaintext fallback: the
 * secret always exists (generated on AWS, made by the local runtime), and its absence is an error.
 *
 * A key of its own rather than `webhook-key`: every function that verifies user tokens must open
 * signing secrets, and with one key they could open every webhook secret and push provider key too.
 */
async function signingKeys(): Promise<KeyRing> {
  const ring = await secretKeyRing('signing-key');
  if (!ring) throw new Error('The signing-key secret is not set: generated keys cannot be sealed or opened');
  return ring;
}

export async function sealGeneratedKey(plaintext: string, binding: SealBinding): Promise<Required<SealedValue>> {
  return seal(await signingKeys(), plaintext, binding);
}

export async function openGeneratedKey(sealed: SealedValue, binding: SealBinding): Promise<string> {
  return open(await signingKeys(), sealed, binding, 'signing-key');
}

/** Whether a sealed value is under a key that is no longer the current one (it should be sealed again). */
export async function generatedKeyIsStale(sealed: SealedValue): Promise<boolean> {
  return isStale(await signingKeys(), sealed);
}

/**
 * 32 bytes derived from the current signing key under `label`, for values that must be stable
 * across instances without being stored (the VAPID decoys). They change when the key is rotated.
 */
export async function derivedKey(label: string): Promise<Buffer> {
  const { current } = await signingKeys();
  return Buffer.from(hkdfSync('sha256', current.key, Buffer.alloc(0), label, 32));
}
