import { DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { roomPk, userPk } from './keys';
import { putIfAbsent } from './put-if-absent';

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

/** Up to `limit` watches of the watcher, in target order. */
export async function watchesOf(projectId: string, watcherId: string, limit: number): Promise<WatchItem[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': watchlistPk(projectId, watcherId) },
      Limit: limit,
    }),
  );
  return Items.map((raw) => watchItem.parse(raw));
}

/** Files the watch in the watcher's list unless it is there already: `false` when it was. */
export const putWatchIfAbsent = (projectId: string, watch: WatchItem): Promise<boolean> =>
  putIfAbsent({ ...watchlistKey(projectId, watch.watcherId, watch.type, watch.targetId), ...watch });

/** Files the watch under its target (idempotent: a repeat rewrites it). */
export async function putWatcher(projectId: string, watch: WatchItem): Promise<void> {
  await db.send(
    new PutCommand({ TableName: tableName, Item: { ...watcherKey(projectId, watch.type, watch.targetId, watch.watcherId), ...watch } }),
  );
}

/** Deletes the watch from both sides, in parallel. */
export async function deleteWatch(projectId: string, watcherId: string, type: WatchTargetType, targetId: string): Promise<void> {
  await Promise.all([
    db.send(new DeleteCommand({ TableName: tableName, Key: watchlistKey(projectId, watcherId, type, targetId) })),
    db.send(new DeleteCommand({ TableName: tableName, Key: watcherKey(projectId, type, targetId, watcherId) })),
  ]);
}

/** The ids of the target's watchers: one Query of its watchers partition (pattern 18). */
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
