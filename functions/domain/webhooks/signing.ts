import { createHmac, timingSafeEqual } from 'node:crypto';
import { signedTimestampVerdict } from '#shared/signed-timestamp';

/** `X-Service-Signature`: lowercase hex HMAC-SHA256 of the raw body with the webhook secret. */
export const signBody = (secret: string, body: string) => createHmac('sha256', secret).update(body, 'utf8').digest('hex');

/**
 * `X-Service-Signature-V2`: lowercase hex HMAC-SHA256 of `<timestamp>.<deliveryId>.<body>`, where
 * `timestamp` is `X-Service-Timestamp` (Unix seconds of the attempt). `X-Service-Signature` covers
 * the body alone, so a captured request could be sent again at any time, or its body under another
 * delivery id; this one lets a receiver refuse both (docs/api.md, "Verifying a delivery").
 */
export const signTimestamped = (secret: string, timestamp: string, deliveryId: string, body: string) =>
  signBody(secret, `${timestamp}.${deliveryId}.${body}`);

/** How far (seconds, either way) a receiver should accept `X-Service-Timestamp` from its own clock. */
export const REPLAY_WINDOW_SECONDS = 300;

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;

/** Constant-time check; a signature that is not 64 hex characters is simply invalid. */
export function verifySignature(secret: string, body: string, signature: string): boolean {
  if (!HEX_SHA256.test(signature)) return false;
  return timingSafeEqual(Buffer.from(signBody(secret, body), 'hex'), Buffer.from(signature, 'hex'));
}

/** A timestamped signature's verdict: the signature, and whether its timestamp is inside the replay window. */
export function verifyTimestampedSignature(
  secret: string,
  signed: { timestamp: string; deliveryId: string; body: string; signature: string },
  nowSeconds = Math.floor(Date.now() / 1000),
): { valid: boolean; withinReplayWindow: boolean } {
  const withinReplayWindow = signedTimestampVerdict(signed.timestamp, REPLAY_WINDOW_SECONDS, nowSeconds) === 'fresh';
  const matches = verifySignature(secret, `${signed.timestamp}.${signed.deliveryId}.${signed.body}`, signed.signature);
  return { valid: matches && withinReplayWindow, withinReplayWindow };
}
