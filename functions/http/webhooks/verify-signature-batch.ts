import { verifySignature } from '#domain/webhooks/signing';
import { httpHandler, ok } from '#edge/http';
import * as z from '#shared/schema';
import { signatureFrom, timestampedFields, verdictOn } from './signature';

const secret = z.string().check(z.minLength(1), z.maxLength(256));
const signature = z.optional(z.string().check(z.maxLength(200)));
const body = z.union([
  z.strictObject({ secret, body: z.string().check(z.maxLength(256 * 1024)), signature, ...timestampedFields }),
  z.strictObject({ secret, events: z.array(z.unknown()).check(z.minLength(1), z.maxLength(1000)), signature }),
]);

/**
 * Verifies a signature for a given secret: a single body (body-only, or timestamped with
 * `timestamp` and `deliveryId`), or a batch whose signature is the HMAC of the JSON serialization
 * of `events`.
 */
export const handler = httpHandler('VerifyWebhookSignatures', { body }, async ({ body, headers }) => {
  if ('events' in body) {
    const given = signatureFrom(body.signature, headers);
    return ok({ valid: verifySignature(body.secret, JSON.stringify(body.events), given), count: body.events.length });
  }
  return ok(verdictOn(body.secret, body, headers));
});
