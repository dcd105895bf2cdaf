import { consumeRateLimit } from '#domain/rate-limit/rate-limit';
import { config } from '#shared/config';
import type { Connection } from '#shared/db/connection';
import { broadcastToRoom } from './broadcast';
import { roomConnections } from './connections';
import { publishRealtimeEvents } from './room-events';

/** One second: client events are typing indicators and cursors, limited per connection like Pusher's. */
const CLIENT_EVENT_WINDOW_MS = 1000;

/**
 * A `client-*` event of a room connection: rate limited per connection (throws `RateLimitedError`),
 * then broadcast to the room's other connections, never back to the sender, and offered to
 * `client_event` webhooks.
 */
export async function relayClientEvent(connection: Connection, event: string, data: Record<string, unknown>): Promise<void> {
  const roomId = connection.roomId;
  if (!roomId) throw new Error('Client events need a room connection');
  // Client events are not stored, so nothing orders the list read after a write: it runs beside
  // the rate limit, saving a round trip, and is simply not used when the limit says no.
  const [, refs] = await Promise.all([
    consumeRateLimit(
      connection.projectId,
      'client-events',
      [connection.connectionId],
      config.RATE_LIMIT_CLIENT_EVENTS_PER_SECOND,
      CLIENT_EVENT_WINDOW_MS,
    ),
    roomConnections(connection.projectId, roomId),
  ]);
  await Promise.all([
    broadcastToRoom(
      connection.projectId,
      roomId,
      { type: 'event', roomId, event, data, userId: connection.userId, socketId: connection.connectionId },
      { excludeConnectionId: connection.connectionId, refs },
    ),
    publishRealtimeEvents(connection.projectId, [{ type: 'client_event', payload: { roomId, event, data } }]),
  ]);
}
