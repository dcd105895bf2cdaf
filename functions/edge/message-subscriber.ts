import { sqsBatchHandler, sqsBatchPipeline, withRecordTraceId } from '#edge/sqs-batch';
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

/**
 * The queue consumer of a subscriber that handles a batch by groups: records are parsed, events of
 * the given types grouped by `groupOf` (`undefined`: nothing to do), and each group handled once,
 * all in parallel; a record fails when its group does (or when it is not an event), so SQS
 * retries exactly those. For work that one pass does for many events at once, such as a recount.
 */
export function groupedEventSubscriber<T extends EventType>(
  name: string,
  types: readonly T[],
  groupOf: (event: DomainEvent<T>) => string | undefined,
  handleGroup: (events: readonly DomainEvent<T>[]) => Promise<unknown>,
) {
  const taken = new Set<EventType>(types);
  return sqsBatchPipeline(name).handler(async (batch) => {
    const groups = new Map<string, DomainEvent<T>[]>();
    // A group's work serves many requests at once, so it keeps the batch's trace id; each record's own reading logs under its own.
    const parsed = batch.Records.map((record) =>
      withRecordTraceId(record, () => {
        try {
          const event = parseEvent(JSON.parse(record.body));
          if (!taken.has(event.type)) {
            logger.warn('an event this subscriber does not take reached its queue', { type: event.type, eventId: event.id });
            return { group: undefined };
          }
          const group = groupOf(event as DomainEvent<T>);
          if (group !== undefined) groups.set(group, [...(groups.get(group) ?? []), event as DomainEvent<T>]);
          return { group };
        } catch (error) {
          return { error };
        }
      }),
    );
    const outcomes = new Map([...groups].map(([group, events]) => [group, handleGroup(events)] as const));
    return Promise.allSettled(
      parsed.map(async (record) => {
        if ('error' in record) throw record.error;
        if (record.group !== undefined) await outcomes.get(record.group);
      }),
    );
  });
}
