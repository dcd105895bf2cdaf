import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { DomainEvent } from '#shared/events';
import { currentTraceId } from '#shared/request-context';
import { putAll } from './batch';
import { db, tableName } from './client';
import { OUTBOX_SK_PREFIX, projectPk } from './keys';
import type { TransactPart } from './transact';

/**
 * An event waiting in the table for the stream to carry it to the publisher: its own partition
 * (one per event, so a burst spreads over many), written once, gone by TTL a little after the
 * stream's 24 hours. Claims of subscribers that must not repeat work (`event-claim.ts`) sit in the
 * same partition.
 */
export const outboxPk = (projectId: string, eventId: string) => `${projectPk(projectId)}#EVT#${eventId}`;

export const outboxKey = (projectId: string, eventId: string) => ({
  pk: outboxPk(projectId, eventId),
  sk: `${OUTBOX_SK_PREFIX}${eventId}`,
});

/** Two days: past the stream's retention and any subscriber's redelivery of the same event. */
export const OUTBOX_RETENTION_SECONDS = 2 * 24 * 3600;

/**
 * The item: the event, and beside it the trace id of the request that wrote it, which the
 * publisher hands on with the event (an attribute of the same item: no request more).
 */
export function outboxItem(event: DomainEvent) {
  const traceId = currentTraceId();
  return {
    ...outboxKey(event.projectId, event.id),
    event,
    ...(traceId ? { traceId } : {}),
    ttl: Math.floor(Date.now() / 1000) + OUTBOX_RETENTION_SECONDS,
  };
}

/** Writes events to the outbox: one Put for one event, batches of 25 for more. */
export async function putOutboxEvents(events: readonly DomainEvent[]): Promise<void> {
  if (events.length === 1) {
    await db.send(new PutCommand({ TableName: tableName, Item: outboxItem(events[0] as DomainEvent) }));
  } else if (events.length > 1) {
    await putAll(events.map(outboxItem));
  }
}

/** The outbox write of an event, as one part of a transaction with the change it announces. */
export const putOutboxEventPart = (event: DomainEvent) =>
  ({ Put: { TableName: tableName, Item: outboxItem(event) } }) satisfies TransactPart;
