import { disconnectRemovedMember } from '#domain/realtime/removed-members';
import { eventSubscriber } from '#edge/message-subscriber';

/** The removed members subscriber's queue consumer: a removed member's sockets to the room are closed. */
export const handler = eventSubscriber('disconnecting a removed member', ['room.member_left'], disconnectRemovedMember);
