import { secretOfWebhook, WEBHOOK_ID_PATTERN } from '#domain/webhooks/registrations';
import { httpHandler, ok } from '#edge/http';
import * as z from '#shared/schema';
import { timestampedFields, verdictOn } from './signature';

const body = z.strictObject({
  webhookId: z.string().check(z.regex(WEBHOOK_ID_PATTERN, 'must be a webhook id')),
  body: z.string().check(z.maxLength(256 * 1024)),
  signature: z.optional(z.string().check(z.maxLength(200))),
  ...timestampedFields,
});

/** Checks a payload against a registered webhook's secret, without revealing the secret. */
export const handler = httpHandler('VerifyWebhook', { body }, async ({ body, headers }) => {
  return ok(verdictOn(await secretOfWebhook(body.webhookId), body, headers));
});
