import { notifyRoomWatchers } from '#domain/realtime/watch-notifications';
import { messageCreatedSubscriber } from '#edge/message-subscriber';

/** The watchers subscriber's queue consumer: a new message in a watched room reaches its watchers' user channels. */
export const handler = messageCreatedSubscriber('notifying watchers', notifyRoomWatchers);
