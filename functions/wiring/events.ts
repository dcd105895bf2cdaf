import { MESSAGE_SK_PREFIX, OUTBOX_SK_PREFIX } from './table.ts';
import type { Area } from './types.ts';

/**
 * The items whose insertion carries domain events: messages (`MSG#`, the message is the event) and
 * outbox items (`EVT#`, written with the change they announce). Everything else on the stream never
 * invokes the publisher.
 */
export const eventCarryingItems = {
  eventName: ['INSERT'],
  dynamodb: { Keys: { sk: { S: [{ prefix: MESSAGE_SK_PREFIX }, { prefix: OUTBOX_SK_PREFIX }] } } },
} as const;

/** The outbox's reader: the table's change stream turned into published domain events. */
export const events: Area = {
  id: 'Events',
  summary: 'The event publisher: domain events from the table stream to the fan-out topic',
  streamConsumers: [
    {
      id: 'EventPublisher',
      handler: 'workers/publish-events.ts',
      batchSize: 100,
      filters: [eventCarryingItems],
      timeoutSeconds: 60,
      // Reads the memberships of @-mentioned users, off the sender's path.
      bindings: ['table:read', 'events:publish'],
      summary: 'Publishes the domain events of new messages and outbox items to the event topic, once each',
    },
  ],
};
