import { randomUUID } from 'node:crypto';
import { putOutboxEventPart, putOutboxEvents } from '#shared/db/outbox';
import { type DomainEvent, domainEvent, type EventPayload, type EventType } from '#shared/events';

/** A new event with a fresh id, checked against the catalogue. */
export const newEvent = <T extends EventType>(type: T, projectId: string, payload: EventPayload<T>): DomainEvent<T> =>
  domainEvent(type, projectId, payload, { id: randomUUID() });

/**
 * Writes events to the outbox: from there the table stream carries each to the publisher, so an
 * event is published when, and only when, this write succeeds, whatever happens to the fan-out
 * meanwhile. A change that must announce itself atomically puts {@link outboxPut} into its own
 * `transactWrite` instead.
 */
export async function emitEvents(events: readonly DomainEvent[]): Promise<void> {
  await putOutboxEvents(events);
}

/** The outbox write of an event, as one part of a `transactWrite` with the change it announces. */
export const outboxPut = (event: DomainEvent) => putOutboxEventPart(event);
