import { httpHandler, ok } from '#edge/http';
import { EVENT_TYPES } from '#shared/events';

export const handler = httpHandler('ListWebhookEventTypes', {}, async () => ok({ events: EVENT_TYPES }));
