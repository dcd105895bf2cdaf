import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { roomPk, userPk } from './keys';

export const WATCH_TARGET_TYPES = ['room', 'user'] as const;
export type WatchTargetType = (typeof WATCH_TARGET_TYPES)[number];

/**
 * A watch is stored twice: in the watcher's list (`GET /users/{id}/watchlist`) and under its target,
 * so activity in a room, or a user going online, finds its watchers with one Query.
 */
export const watchItem = z.object({
  watcherId: z.string(),
  type: z.enum(WATCH_TARGET_TYPES),
  targetId: z.string(),
  createdAt: z.string(),
});
export type WatchItem = z.infer<typeof watchItem>;

export const watchlistKey = (projectId: string, watcherId: string, type: WatchTargetType, targetId: string) => ({
  pk: `${userPk(projectId, watcherId)}#WATCH`,
  sk: `${type}#${targetId}`,
});
export const watchlistPk = (projectId: string, watcherId: string) => `${userPk(projectId, watcherId)}#WATCH`;

export const watchersPk = (projectId: string, type: WatchTargetType, targetId: string) =>
  `${type === 'room' ? roomPk(projectId, targetId) : userPk(projectId, targetId)}#WATCHERS`;
export const watcherKey = (projectId: string, type: WatchTargetType, targetId: string, watcherId: string) => ({
  pk: watchersPk(projectId, type, targetId),
  sk: `U#${watcherId}`,
});

/** Who watches a room or a user: one Query of the target's watchers partition. */
export async function watcherIdsOf(projectId: string, type: WatchTargetType, targetId: string): Promise<string[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': watchersPk(projectId, type, targetId) },
    }),
  );
  return Items.map((raw) => watchItem.parse(raw).watcherId);
}
