import { onceFor } from '#domain/events/once';
import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import { membersAmong } from '#shared/db/membership';
import { findRoom } from '#shared/db/room';
import { type WatchTargetType, watcherIdsOf } from '#shared/db/watchlist';
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
  const watchers = await watcherIdsOf(projectId, type, targetId);
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
  const room = await findRoom(projectId, activity.roomId);
  if (!room) return 0;
  if (room.type !== 'public') {
    const stillMembers = await membersAmong(projectId, activity.roomId, watchers);
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
