import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { countRoomMessages } from '#domain/ai/room-summaries';
import { parseEvent } from '#shared/events';
import { logger } from '#shared/logger';

/**
 * The room summary scheduler: `message.created` events, counted per room per batch (one write per
 * room, however many of its messages the batch holds). A batch fails as a whole and is retried:
 * counting twice only brings a summary a little earlier.
 */
export const handler = middy<SQSEvent, SQSBatchResponse>().handler(async (event) => {
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
  const failures: string[] = [];
  await Promise.all(
    [...perRoom.values()].map(async (room) => {
      try {
        await countRoomMessages(room.projectId, room.roomId, room.count);
      } catch (error) {
        logger.error('room summary scheduler failed', { projectId: room.projectId, roomId: room.roomId, error: error as Error });
        failures.push(...room.records);
      }
    }),
  );
  return { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) };
});
