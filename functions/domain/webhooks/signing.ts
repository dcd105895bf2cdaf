import { createHmac, timingSafeEqual } from 'node:crypto';

/** `X-Service-Signature`: lowercase hex HMAC-SHA256 of the raw body with the webhook secret. */
export const signBody = (secret: string, body: string) => createHmac('sha256', secret).update(body, 'utf8').digest('hex');

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

/** Constant-time check; a signature that is not 64 hex characters is simply invalid. */
export function verifySignature(secret: string, body: string, signature: string): boolean {
  if (!HEX_SHA256.test(signature)) return false;
  return timingSafeEqual(Buffer.from(signBody(secret, body), 'hex'), Buffer.from(signature, 'hex'));
}
