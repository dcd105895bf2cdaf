import { accessRoom, forgetRoomAccess } from '#domain/rooms/rooms';
import type { Principal } from '#shared/auth';
import { setRoomWakeFlag } from '#shared/db/room';
import { deleteWatch, putWatcher, putWatchIfAbsent, type WatchItem, type WatchTargetType, watchesOf } from '#shared/db/watchlist';
import { ConflictError, ForbiddenError } from '#shared/errors';
import { forgetWatchers } from './watch-notifications';

export const MAX_WATCH_TARGETS = 200;

export interface WatchTarget {
  readonly type: WatchTargetType;
  readonly targetId: string;
}

const toTarget = (item: WatchItem) => ({ type: item.type, targetId: item.targetId, createdAt: item.createdAt });

export async function listWatchlist(projectId: string, watcherId: string) {
  return (await watchesOf(projectId, watcherId, MAX_WATCH_TARGETS)).map(toTarget);
}

/**
 * Watches a room (readable by the watcher: public, or a member; admins too, since notices go only
 * to members) or a user of the project. Stored in the watcher's list and under the target;
 * idempotent, and a repeat rewrites the target's side in case an earlier attempt stopped between
 * the two writes. At most `MAX_WATCH_TARGETS` per watcher.
 */
export async function addWatchTarget(
  principal: Principal,
  watcherId: string,
  target: WatchTarget,
): Promise<{ target: ReturnType<typeof toTarget>; created: boolean }> {
  const projectId = principal.projectId;
  if (target.type === 'room') {
    // Checked as the watcher, whoever adds the watch: an admin must not give a user a window into a private room.
    const watcher: Principal =
      principal.kind === 'user' && principal.userId === watcherId
        ? principal
        : { kind: 'user', projectId, userId: watcherId, roles: ['member'] };
    const access = await accessRoom(watcher, target.targetId, { join: false });
    if (!access.membership && access.room.type !== 'public')
      throw new ForbiddenError('The user is not a member of this room', 'not_a_member');
    // Before the watch: a message in between then wakes the watcher subscriber for nothing. Senders
    // whose cached room predates the flag still miss it for up to CACHE_TTL_MS (docs/architecture.md).
    if (!access.room.watched) {
      await setRoomWakeFlag(projectId, target.targetId, 'watched');
      forgetRoomAccess(projectId, target.targetId);
    }
  }
  const current = await listWatchlist(projectId, watcherId);
  const existing = current.find((t) => t.type === target.type && t.targetId === target.targetId);
  if (!existing && current.length >= MAX_WATCH_TARGETS) {
    throw new ConflictError('watchlist_full', `A watchlist holds at most ${MAX_WATCH_TARGETS} targets`);
  }
  const item: WatchItem = {
    watcherId,
    type: target.type,
    targetId: target.targetId,
    createdAt: existing?.createdAt ?? new Date().toISOString(),
  };
  const created = !existing && (await putWatchIfAbsent(projectId, item));
  await putWatcher(projectId, item);
  forgetWatchers(projectId, target.type, target.targetId);
  return { target: toTarget(item), created };
}

export async function removeWatchTarget(projectId: string, watcherId: string, target: WatchTarget): Promise<void> {
  await deleteWatch(projectId, watcherId, target.type, target.targetId);
  forgetWatchers(projectId, target.type, target.targetId);
}
