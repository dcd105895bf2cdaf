import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { roomPk } from './keys';
import type { TransactPart } from './transact';

/** A room's automatic summaries, in a partition of their own, newest last by sort key. */
export const roomSummariesPk = (projectId: string, roomId: string) => `${roomPk(projectId, roomId)}#SUMMARIES`;
export const roomSummaryKey = (projectId: string, roomId: string, createdAt: string, summaryId: string) => ({
  pk: roomSummariesPk(projectId, roomId),
  sk: `S#${createdAt}#${summaryId}`,
});

export const roomSummaryItem = z.object({
  summaryId: z.string(),
  roomId: z.string(),
  summary: z.string(),
  messageCount: z.number().check(z.int()),
  fromMessageId: z.number().check(z.int()),
  toMessageId: z.number().check(z.int()),
  model: z.string(),
  createdAt: z.string(),
});
export type RoomSummaryItem = z.infer<typeof roomSummaryItem>;

/** Stores a summary (written with the room's new summary state and its event). */
export const putRoomSummaryPart = (projectId: string, summary: RoomSummaryItem): TransactPart => ({
  Put: { TableName: tableName, Item: { ...roomSummaryKey(projectId, summary.roomId, summary.createdAt, summary.summaryId), ...summary } },
});

/** The room's `limit` newest summaries, newest first. */
export async function latestRoomSummaries(projectId: string, roomId: string, limit: number): Promise<RoomSummaryItem[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': roomSummariesPk(projectId, roomId) },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return Items.map((raw) => roomSummaryItem.parse(raw));
}
