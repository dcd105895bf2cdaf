import { dispatchMessagePush } from '#domain/push/dispatch';
import { messageCreatedSubscriber } from '#edge/message-subscriber';

/** The push subscriber's queue consumer: each new message notifies the room's members with push targets. */
export const handler = messageCreatedSubscriber('dispatching pushes', dispatchMessagePush);
