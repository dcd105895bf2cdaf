import { countRoomMessages } from '#domain/ai/room-summaries';
import { sqsBatchPipeline } from '#edge/sqs-batch';
import { parseEvent } from '#shared/events';
import { logger } from '#shared/logger';

/**
 * The room summary scheduler: `message.created` events, counted per room per batch (one write per
 * room, however many of its messages the batch holds). When a room's count fails, its records are
 * the batch's failures and are retried: counting twice only brings a summary a little earlier.
 */
export const handler = sqsBatchPipeline('room summary scheduler').handler(async (event) => {
  const perRoom = new Map<string, { projectId: string; roomId: string; count: number; records: string[] }>();
  for (const record of event.Records) {
    try {
      const domainEvent = parseEvent(JSON.parse(record.body));
      if (domainEvent.type !== 'message.created') continue;
      const key = `${domainEvent.projectId}\u0000${domainEvent.payload.roomId}`;
      const entry = perRoom.get(key) ?? { projectId: domainEvent.projectId, roomId: domainEvent.payload.roomId, count: 0, records: [] };
      entry.count++;
      entry.records.push(record.messageId);
      perRoom.set(key, entry);
    } catch (error) {
      // Not an event of the catalogue: retrying cannot make it one.
      logger.error('room summary scheduler: unreadable event', { messageId: record.messageId, error: error as Error });
    }
  }
  const countOfRecord = new Map<string, Promise<unknown>>();
  for (const room of perRoom.values()) {
    const counted = countRoomMessages(room.projectId, room.roomId, room.count).catch((error: unknown) => {
      logger.error('room summary scheduler failed', { projectId: room.projectId, roomId: room.roomId, error: error as Error });
      throw error;
    });
    for (const messageId of room.records) countOfRecord.set(messageId, counted);
  }
  // One outcome per record, in the batch's order: its room's count, or done when it was not one to count.
  return Promise.allSettled(event.Records.map((record) => countOfRecord.get(record.messageId)));
});
