import type { DomainEvent } from '#shared/events';
import { OUTBOX_SK_PREFIX, projectPk } from './keys';

/**
 * An event waiting in the table for the stream to carry it to the publisher: its own partition
 * (one per event, so a burst spreads over many), written once, gone by TTL a little after the
 * stream's 24 hours. Claims of subscribers that must not repeat work (`DONE#<subscriber>`) sit in
 * the same partition.
 */
export const outboxKey = (projectId: string, eventId: string) => ({
  pk: `${projectPk(projectId)}#EVT#${eventId}`,
  sk: `${OUTBOX_SK_PREFIX}${eventId}`,
});

/** Where a subscriber records that it handled (or is handling) an event. */
export const eventClaimKey = (projectId: string, eventId: string, subscriber: string) => ({
  pk: `${projectPk(projectId)}#EVT#${eventId}`,
  sk: `DONE#${subscriber}`,
});

/** Two days: past the stream's retention and any subscriber's redelivery of the same event. */
export const OUTBOX_RETENTION_SECONDS = 2 * 24 * 3600;

export function outboxItem(event: DomainEvent) {
  return {
    ...outboxKey(event.projectId, event.id),
    event,
    ttl: Math.floor(Date.now() / 1000) + OUTBOX_RETENTION_SECONDS,
  };
}
