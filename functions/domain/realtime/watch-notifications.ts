import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { onceFor } from '#domain/events/once';
import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import { getAll } from '#shared/db/batch';
import { db, tableName } from '#shared/db/client';
import { membershipItem, membershipKey } from '#shared/db/membership';
import { roomItem, roomKey } from '#shared/db/room';
import { type WatchTargetType, watchersPk, watchItem } from '#shared/db/watchlist';
import type { DomainEvent, EventPayload } from '#shared/events';
import { sendToUserChannels } from './user-channel';

/**
 * Watchers change rarely and are read on every message of a room and every connect and disconnect
 * of a user, so each instance keeps them for `CACHE_TTL_MS`: a new watch may take that long to
 * take effect where another instance served it.
 */
const watchersCache = new TtlCache<string[]>(config.CACHE_TTL_MS);
const watchersCacheKey = (projectId: string, type: WatchTargetType, targetId: string) => `${projectId}|${type}|${targetId}`;

/** Called by whoever changes a target's watchers in this instance. */
export const forgetWatchers = (projectId: string, type: WatchTargetType, targetId: string) =>
  watchersCache.delete(watchersCacheKey(projectId, type, targetId));

async function watchersOf(projectId: string, type: WatchTargetType, targetId: string): Promise<string[]> {
  const key = watchersCacheKey(projectId, type, targetId);
  const cached = watchersCache.get(key);
  if (cached) return cached;
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': watchersPk(projectId, type, targetId) },
    }),
  );
  const watchers = Items.map((raw) => watchItem.parse(raw).watcherId);
  watchersCache.set(key, watchers);
  return watchers;
}

/** A watched user's first connection opened or last one closed. */
export async function notifyUserWatchers(projectId: string, userId: string, activity: 'online' | 'offline'): Promise<number> {
  const watchers = await watchersOf(projectId, 'user', userId);
  if (watchers.length === 0) return 0;
  return sendToUserChannels(projectId, watchers, {
    type: 'watchlist_event',
    target: { type: 'user', targetId: userId },
    activity,
    userId,
    at: new Date().toISOString(),
  });
}

/**
 * A new message in a watched room (a `message.created` event, off the send path), at most once per
 * event. Watchers of a private room must still be members, since membership may have ended since
 * they started watching: one room read and one BatchGet, paid only when the room has watchers.
 */
export async function notifyRoomWatchers(event: DomainEvent<'message.created'>): Promise<number> {
  const { projectId, payload: activity } = event;
  const watchers = await watchersOf(projectId, 'room', activity.roomId);
  if (watchers.length === 0) return 0;
  let sent = 0;
  await onceFor('WatcherNotifier', event, async () => {
    sent = await notifyWatchersOfMessage(projectId, activity, watchers);
  });
  return sent;
}

async function notifyWatchersOfMessage(projectId: string, activity: EventPayload<'message.created'>, watching: string[]): Promise<number> {
  let watchers = watching;
  // Read here, not through `accessRoom`: the rooms module imports the realtime modules that import this one.
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: roomKey(projectId, activity.roomId) }));
  if (!Item) return 0;
  const room = roomItem.parse(Item);
  if (room.type !== 'public') {
    const members = await getAll(watchers.map((watcherId) => membershipKey(projectId, activity.roomId, watcherId)));
    const stillMembers = new Set(members.map((raw) => membershipItem.parse(raw).userId));
    watchers = watchers.filter((watcherId) => stillMembers.has(watcherId));
  }
  // The author needs no notice of their own message.
  watchers = watchers.filter((watcherId) => watcherId !== activity.userId);
  return sendToUserChannels(projectId, watchers, {
    type: 'watchlist_event',
    target: { type: 'room', targetId: activity.roomId },
    activity: 'message',
    roomId: activity.roomId,
    message: { id: activity.messageId, userId: activity.userId, content: activity.content, createdAt: activity.createdAt },
    at: new Date().toISOString(),
  });
}
