import { type MessageActivity, notifyRoomWatchers } from '#domain/realtime/watch-notifications';
import { dispatchEvent } from '#domain/webhooks/deliveries';
import type { DomainEvent } from '#shared/queue';
import { sqsBatchHandler } from '#shared/sqs-batch';

/**
 * Events queue consumer: every domain event reaches the webhook registrations subscribed to it,
 * and a `message.created` the user channels of the room's watchers.
 */
export const handler = sqsBatchHandler('dispatching an event', async (body, record) => {
  const domainEvent = body as DomainEvent & { id?: string };
  await Promise.all([
    dispatchEvent(domainEvent, domainEvent.id ?? record.messageId),
    domainEvent.type === 'message.created'
      ? notifyRoomWatchers(domainEvent.projectId, domainEvent.payload as unknown as MessageActivity)
      : undefined,
  ]);
});
