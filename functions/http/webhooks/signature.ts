import { verifySignature, verifyTimestampedSignature } from '#domain/webhooks/signing';
import { BadRequestError } from '#shared/errors';
import * as z from '#shared/schema';

type Headers = Readonly<Record<string, string | undefined>>;

/** The signature from the body, else `X-Service-Signature`, else its alias `X-Webhook-Signature`. */
export function signatureFrom(bodySignature: string | undefined, headers: Headers): string {
  const signature = bodySignature ?? headers['x-service-signature'] ?? headers['x-webhook-signature'];
  if (!signature) {
    throw new BadRequestError('A signature is required (body field, X-Service-Signature or X-Webhook-Signature)', [
      { field: 'body.signature', message: 'is required (or the X-Service-Signature header)' },
    ]);
  }
  return signature.trim();
}

/**
 * Optional body fields of a single-body verification: given together, the signature is checked as
 * `X-Service-Signature-V2` (over `<timestamp>.<deliveryId>.<body>`) and the timestamp against the
 * replay window.
 */
export const timestampedFields = {
  timestamp: z.optional(z.string().check(z.regex(/^\d{1,12}$/, 'must be the X-Service-Timestamp value (Unix seconds)'))),
  deliveryId: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
};

/**
 * The verdict on one body: `{ valid }` for the body-only signature; with `timestamp` and
 * `deliveryId`, the timestamped signature (from the body, else `X-Service-Signature-V2`), valid
 * only inside the replay window, which `withinReplayWindow` reports apart. No secret (one that
 * does not open) verifies nothing.
 */
export function verdictOn(
  secret: string | undefined,
  request: { body: string; signature?: string; timestamp?: string; deliveryId?: string },
  headers: Headers,
): { valid: boolean; withinReplayWindow?: boolean } {
  const { timestamp, deliveryId } = request;
  if ((timestamp === undefined) !== (deliveryId === undefined)) {
    const missing = timestamp === undefined ? 'timestamp' : 'deliveryId';
    throw new BadRequestError('timestamp and deliveryId go together (the timestamped signature covers both)', [
      { field: `body.${missing}`, message: `is required with \`${missing === 'timestamp' ? 'deliveryId' : 'timestamp'}\`` },
    ]);
  }
  if (timestamp === undefined || deliveryId === undefined) {
    const signature = signatureFrom(request.signature, headers);
    return { valid: secret !== undefined && verifySignature(secret, request.body, signature) };
  }
  const signature = (request.signature ?? headers['x-service-signature-v2'])?.trim();
  if (!signature) {
    throw new BadRequestError('A signature is required (body field or X-Service-Signature-V2)', [
      { field: 'body.signature', message: 'is required (or the X-Service-Signature-V2 header)' },
    ]);
  }
  const verdict = verifyTimestampedSignature(secret ?? '', { timestamp, deliveryId, body: request.body, signature });
  return { valid: secret !== undefined && verdict.valid, withinReplayWindow: verdict.withinReplayWindow };
}
