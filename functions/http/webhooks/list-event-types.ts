import { EVENT_TYPES } from '#shared/events';
import { httpHandler, ok } from '#shared/http';

export const handler = httpHandler('ListWebhookEventTypes', {}, async () => ok({ events: EVENT_TYPES }));
