import type { DomainEvent } from '#shared/events';
import { broadcastToRoom } from './broadcast';

/**
 * A stored message changed (edit, delete, reaction, pin, transcript, whoever produced the event):
 * every connection of its room gets a `message_updated` frame with the event's payload. The frame
 * follows the change through the outbox, so a change the request path stored is never missed,
 * and a change made elsewhere (a transcript arriving later) reaches sockets the same way.
 */
export async function broadcastMessageUpdate(event: DomainEvent<'message.updated'>): Promise<void> {
  await broadcastToRoom(event.projectId, event.payload.roomId, { type: 'message_updated', ...event.payload });
}
