import { dispatchMessagePush } from '#domain/push/dispatch';
import { parseEvent } from '#shared/events';
import { logger } from '#shared/logger';
import { sqsBatchHandler } from '#shared/sqs-batch';

/** The push subscriber's queue consumer: each new message notifies the room's members with push targets. */
export const handler = sqsBatchHandler('dispatching pushes', async (body) => {
  const event = parseEvent(body);
  if (event.type !== 'message.created') {
    // The subscription's filter policy lets message.created through only.
    logger.warn('an event this subscriber does not take reached its queue', { type: event.type, eventId: event.id });
    return;
  }
  await dispatchMessagePush(event);
});
