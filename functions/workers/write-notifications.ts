import { type NotificationSourceEvent, writeNotificationsFor } from '#domain/notifications/writer';
import { eventSubscriber } from '#edge/message-subscriber';

/** The notification subscriber's queue consumer: notifications and activity feed entries from domain events. */
export const handler = eventSubscriber<NotificationSourceEvent['type']>(
  'writing notifications',
  ['message.created', 'handoff', 'room.summary'],
  writeNotificationsFor,
);
