import { notifyRoomWatchers } from '#domain/realtime/watch-notifications';
import { parseEvent } from '#shared/events';
import { logger } from '#shared/logger';
import { sqsBatchHandler } from '#shared/sqs-batch';

/** The watchers subscriber's queue consumer: a new message in a watched room reaches its watchers' user channels. */
export const handler = sqsBatchHandler('notifying watchers', async (body) => {
  const event = parseEvent(body);
  if (event.type !== 'message.created') {
    // The subscription's filter policy lets message.created through only.
    logger.warn('an event this subscriber does not take reached its queue', { type: event.type, eventId: event.id });
    return;
  }
  await notifyRoomWatchers(event);
});
