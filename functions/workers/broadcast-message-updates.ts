import { broadcastMessageUpdate } from '#domain/realtime/message-updates';
import { eventSubscriber } from '#edge/message-subscriber';

/** The message updates subscriber's queue consumer: each `message.updated` reaches its room's sockets as a `message_updated` frame. */
export const handler = eventSubscriber('broadcasting message updates', ['message.updated'], broadcastMessageUpdate);
