import { findMembership } from '#shared/db/membership';
import type { DomainEvent } from '#shared/events';
import { disconnectFromRoom } from './disconnect';

/**
 * The realtime side of a membership's end (the `RemovedMemberDisconnector` subscriber): the
 * removed user's sockets to the room are closed, so they stop receiving it. Until this runs (an
 * event's latency after the removal) an open socket still receives the room's messages. A user who
 * is a member again by then keeps their sockets.
 */
export async function disconnectRemovedMember(event: DomainEvent<'room.member_left'>): Promise<number> {
  const { roomId, userId } = event.payload;
  if (await findMembership(event.projectId, roomId, userId, { consistent: true })) return 0;
  return disconnectFromRoom(event.projectId, roomId, userId);
}
