import { listWebhooks } from '#domain/webhooks/registrations';
import { httpHandler, ok } from '#edge/http';

export const handler = httpHandler('ListWebhooks', {}, async ({ caller }) => ok({ webhooks: await listWebhooks(caller.projectId) }));
