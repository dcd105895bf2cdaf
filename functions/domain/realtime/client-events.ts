import type { Connection, ConnectionRef } from '#shared/db/connection';
import { socketOf } from '#shared/pusher-protocol';
import { broadcastToRoom } from './broadcast';
import { roomConnections } from './connections';
import { publishRealtimeEvents } from './room-events';

/** A client event's name, on a native socket (`type`) and a Pusher one (`event`) alike. */
export const CLIENT_EVENT_PATTERN = /^client-[A-Za-z0-9_.:-]{1,64}$/;
/** Pusher's limit for one client event; keeps a chatty client from filling everyone's socket. */
export const MAX_CLIENT_EVENT_BYTES = 10 * 1024;

/**
 * The room connections a `client-*` event goes to. Client events are not stored, so nothing orders
 * this read after a write: the frame router runs it beside the event's rate limit.
 */
export function clientEventTargets(connection: Connection): Promise<readonly ConnectionRef[]> {
  if (!connection.roomId) throw new Error('Client events need a room connection');
  return roomConnections(connection.projectId, connection.roomId);
}

/**
 * A `client-*` event of a room connection, its rate limit already passed: broadcast to the room's
 * other connections, never back to the sender, and offered to `client_event` webhooks.
 */
export async function relayClientEvent(
  connection: Connection,
  event: string,
  data: Record<string, unknown>,
  refs: readonly ConnectionRef[],
): Promise<void> {
  const roomId = connection.roomId;
  if (!roomId) throw new Error('Client events need a room connection');
  await Promise.all([
    broadcastToRoom(
      connection.projectId,
      roomId,
      { type: 'event', roomId, event, data, userId: connection.userId, socketId: connection.connectionId },
      // A Pusher subscription's socket may hold the room's other channel too: the whole socket is the sender.
      { excludeConnectionId: socketOf(connection.connectionId), refs },
    ),
    publishRealtimeEvents(connection.projectId, [{ type: 'client_event', payload: { roomId, event, data } }]),
  ]);
}
