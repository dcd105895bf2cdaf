import { WEBHOOK_EVENT_TYPES } from '#domain/webhooks/catalogue';
import { httpHandler, ok } from '#shared/http';

export const handler = httpHandler('ListWebhookEventTypes', {}, async () => ok({ events: WEBHOOK_EVENT_TYPES }));
