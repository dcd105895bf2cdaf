import { createECDH, createHmac } from 'node:crypto';
import { projectVapidKeys } from '#domain/push/config';
import { loadProject } from '#shared/auth';
import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import { derivedKey } from '#shared/generated-keys';

/**
 * The public key `GET /push/web/vapid-public-key` answers. The route is unauthenticated (a browser
 * asks before it can subscribe), so the answer must not tell which projects exist: a project that
 * does not exist gets a decoy, a P-256 public key derived from its id under the `signing-key` secret,
 * as stable as a real one and made without storing anything. It opens nothing: subscribing takes a
 * token of the project, and no push is ever signed with it.
 */

/** The order of P-256: a private scalar lies in [1, n - 1]. */
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

/**
 * Derived from the `signing-key` secret, which every deployment has, under a label of its own so
 * no other use of that key meets it: every instance answers the same decoy for the same id.
 */
const decoyKey = () => derivedKey('vapid-decoy-public-key');

function decoyPublicKey(key: Buffer, projectId: string): string {
  for (let counter = 0; ; counter++) {
    const scalar = createHmac('sha256', key).update(`${projectId}\u0000${counter}`).digest();
    const value = BigInt(`0x${scalar.toString('hex')}`);
    if (value === 0n || value >= P256_ORDER) continue;
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(scalar);
    return ecdh.getPublicKey().toString('base64url');
  }
}

/** Real and decoy answers alike, so a repeat costs the same whether the project exists or not. */
const answers = new TtlCache<string>(config.CACHE_TTL_MS);

export async function vapidPublicKeyFor(projectId: string): Promise<string> {
  const cached = answers.get(projectId);
  if (cached) return cached;
  const publicKey = (await loadProject(projectId))
    ? (await projectVapidKeys(projectId)).publicKey
    : decoyPublicKey(await decoyKey(), projectId);
  answers.set(projectId, publicKey);
  return publicKey;
}
