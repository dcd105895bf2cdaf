import { dispatchEvent } from '#domain/webhooks/deliveries';
import { sqsBatchHandler } from '#edge/sqs-batch';
import { parseEvent } from '#shared/events';
import { logger } from '#shared/logger';

/**
 * The webhook subscriber's queue consumer: each event reaches the project's webhooks subscribed to
 * its type. Idempotent by event id: a repeated event finds its delivery records and sends nothing twice.
 */
export const handler = sqsBatchHandler('dispatching an event to webhooks', async (body) => {
  const event = parseEvent(body);
  const { deliveries, retrying } = await dispatchEvent(event);
  if (deliveries > 0) logger.info('event dispatched to webhooks', { eventId: event.id, type: event.type, deliveries, retrying });
});
