import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { MESSAGE_ID_DIGITS, roomPk } from './keys';
import type { TransactPart } from './transact';

/**
 * A pinned message of a room, beside the `pinnedAt` flag on the message itself: the room's pins
 * partition lists them in one Query (sorted by message id) without reading the room's history.
 * Written and removed in the same transaction as the flag.
 */
export const pinItem = z.object({
  pk: z.string(),
  sk: z.string(),
  roomId: z.string(),
  messageId: z.number().check(z.int()),
  pinnedBy: z.string(),
  pinnedAt: z.string(),
});
export type PinItem = z.infer<typeof pinItem>;

export const roomPinsPk = (projectId: string, roomId: string) => `${roomPk(projectId, roomId)}#PINS`;
/** Not the message's own `MSG#` sort key: the stream takes every inserted `MSG#` item for a new message. */
export const pinKey = (projectId: string, roomId: string, messageId: number) => ({
  pk: roomPinsPk(projectId, roomId),
  sk: `PIN#${String(messageId).padStart(MESSAGE_ID_DIGITS, '0')}`,
});

export const putPinPart = (projectId: string, pin: Omit<PinItem, 'pk' | 'sk'>): TransactPart => ({
  Put: { TableName: tableName, Item: { ...pinKey(projectId, pin.roomId, pin.messageId), ...pin } },
});

/** Unconditional: a delete of a message that was not pinned removes nothing. */
export const deletePinPart = (projectId: string, roomId: string, messageId: number): TransactPart => ({
  Delete: { TableName: tableName, Key: pinKey(projectId, roomId, messageId) },
});

/** Up to `limit` pins of the room, newest message first. */
export async function roomPins(projectId: string, roomId: string, limit: number): Promise<PinItem[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': roomPinsPk(projectId, roomId) },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return Items.map((raw) => pinItem.parse(raw));
}
