import { accessRoom } from '#domain/rooms/rooms';
import { isProjectAdmin, type Principal, requireSelfOrAdmin } from '#shared/auth';
import { putCachedRoomEvent } from '#shared/db/cached-event';
import { ForbiddenError, HttpError } from '#shared/errors';
import { connectionIdOf } from '#shared/pusher-protocol';
import { broadcastToRoom } from './broadcast';
import { userConnections } from './connections';
import { closeConnections } from './disconnect';
import { publishRealtimeEvents } from './room-events';
import { sendToUserChannels } from './user-channel';

/**
 * `POST /events`: a server event to each listed room the caller may post to, except the socket
 * that caused it. The frame becomes the room's cached event (`cache=1`). Rooms the caller may
 * not use (or that do not exist, which includes other tenants' rooms) are skipped, not revealed.
 */
export async function publishServerEvent(
  principal: Principal,
  input: { roomIds: readonly string[]; name: string; data: Record<string, unknown>; excludeSocketId?: string },
): Promise<{ sent: string[]; skipped: string[] }> {
  const projectId = principal.projectId;
  const listed = [...new Set(input.roomIds)];
  // A Pusher client names itself by its socket id (`123.456`), a native one by its connection id.
  const excludeConnectionId =
    input.excludeSocketId === undefined ? undefined : (connectionIdOf(input.excludeSocketId) ?? input.excludeSocketId);
  const sent = new Set<string>();
  const skipped = new Set<string>();
  await Promise.all(
    listed.map(async (roomId) => {
      try {
        const access = await accessRoom(principal, roomId, { join: false });
        const mayPost = principal.kind === 'service' || access.membership || access.room.type === 'public' || isProjectAdmin(principal);
        if (!mayPost) throw new ForbiddenError('Not a member');
      } catch (error) {
        if (error instanceof HttpError && (error.statusCode === 403 || error.statusCode === 404)) {
          skipped.add(roomId);
          return;
        }
        throw error;
      }
      const frame = {
        type: 'event',
        roomId,
        event: input.name,
        data: input.data,
        ...(principal.kind === 'user' ? { userId: principal.userId } : {}),
      };
      await Promise.all([putCachedRoomEvent(projectId, roomId, frame), broadcastToRoom(projectId, roomId, frame, { excludeConnectionId })]);
      sent.add(roomId);
    }),
  );
  // In the caller's order, whichever room finished first.
  return { sent: listed.filter((id) => sent.has(id)), skipped: listed.filter((id) => skipped.has(id)) };
}

/** `POST /users/{userId}/events`: a `notification` on the user's channel and a `user.event` webhook event. */
export async function publishUserEvent(
  principal: Principal,
  userId: string,
  input: { name: string; data: Record<string, unknown> },
): Promise<{ sent: number }> {
  requireSelfOrAdmin(principal, userId);
  const at = new Date().toISOString();
  const [sent] = await Promise.all([
    sendToUserChannels(principal.projectId, [userId], { type: 'notification', event: input.name, data: input.data, at }),
    publishRealtimeEvents(principal.projectId, [{ type: 'user.event', payload: { userId, event: input.name, data: input.data } }]),
  ]);
  return { sent };
}

/**
 * `DELETE /users/{userId}/connections`: closes every connection of the user through the management
 * API and forgets it here at once (`$disconnect` follows on AWS and finds nothing left to do).
 */
export async function closeUserConnections(principal: Principal, userId: string): Promise<{ closed: number }> {
  requireSelfOrAdmin(principal, userId);
  return { closed: await closeConnections(await userConnections(principal.projectId, userId)) };
}
