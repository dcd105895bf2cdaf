import { sqsBatchHandler } from '#edge/sqs-batch';
import { type DomainEvent, type EventType, parseEvent } from '#shared/events';
import { logger } from '#shared/logger';

/**
 * The queue consumer of an event subscriber that takes the given types only (its subscription's
 * filter policy lets nothing else through): each record parsed as a domain event and handed on;
 * any other type is logged and dropped, since retrying cannot make it one.
 */
export function eventSubscriber<T extends EventType>(
  name: string,
  types: readonly T[],
  handle: (event: DomainEvent<T>) => Promise<unknown>,
) {
  const taken = new Set<EventType>(types);
  return sqsBatchHandler(name, async (body) => {
    const event = parseEvent(body);
    if (!taken.has(event.type)) {
      logger.warn('an event this subscriber does not take reached its queue', { type: event.type, eventId: event.id });
      return;
    }
    await handle(event as DomainEvent<T>);
  });
}

/** The queue consumer of a subscriber of `message.created` only. */
export const messageCreatedSubscriber = (name: string, handle: (event: DomainEvent<'message.created'>) => Promise<unknown>) =>
  eventSubscriber(name, ['message.created'], handle);
