import { sqsBatchHandler } from '#edge/sqs-batch';
import { type DomainEvent, parseEvent } from '#shared/events';
import { logger } from '#shared/logger';

/**
 * The queue consumer of an event subscriber that takes `message.created` only (its subscription's
 * filter policy lets nothing else through): each record parsed as a domain event and handed on;
 * any other type is logged and dropped, since retrying cannot make it one.
 */
export function messageCreatedSubscriber(name: string, handle: (event: DomainEvent<'message.created'>) => Promise<unknown>) {
  return sqsBatchHandler(name, async (body) => {
    const event = parseEvent(body);
    if (event.type !== 'message.created') {
      logger.warn('an event this subscriber does not take reached its queue', { type: event.type, eventId: event.id });
      return;
    }
    await handle(event);
  });
}
