import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { putAll } from '#shared/db/batch';
import { db, tableName } from '#shared/db/client';
import { outboxItem } from '#shared/db/outbox';
import { type DomainEvent, domainEvent, type EventPayload, type EventType } from '#shared/events';

/** A new event with a fresh id, checked against the catalogue. */
export const newEvent = <T extends EventType>(type: T, projectId: string, payload: EventPayload<T>): DomainEvent<T> =>
  domainEvent(type, projectId, payload, { id: randomUUID() });

/**
 * Writes events to the outbox: from there the table stream carries each to the publisher, so an
 * event is published when, and only when, this write succeeds, whatever happens to the fan-out
 * meanwhile. A change that must announce itself atomically puts {@link outboxPut} into its own
 * `TransactWriteItems` instead.
 */
export async function emitEvents(events: readonly DomainEvent[]): Promise<void> {
  if (events.length === 1) {
    await db.send(new PutCommand({ TableName: tableName, Item: outboxItem(events[0] as DomainEvent) }));
  } else if (events.length > 1) {
    await putAll(events.map(outboxItem));
  }
}

/** The outbox write of an event, as one entry of a `TransactWriteItems` with the change it announces. */
export const outboxPut = (event: DomainEvent) => ({ Put: { TableName: tableName, Item: outboxItem(event) } });
