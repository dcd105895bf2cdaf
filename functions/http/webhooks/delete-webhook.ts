import { deleteWebhook, WEBHOOK_ID_PATTERN } from '#domain/webhooks/registrations';
import { httpHandler, noContent } from '#edge/http';
import * as z from '#shared/schema';

const params = z.object({ webhookId: z.string().check(z.regex(WEBHOOK_ID_PATTERN, 'must be a webhook id')) });

export const handler = httpHandler('DeleteWebhook', { params }, async ({ params, caller }) => {
  await deleteWebhook(caller.projectId, params.webhookId);
  return noContent();
});
