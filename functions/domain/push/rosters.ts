import { forgetRoomAccess } from '#domain/rooms/rooms';
import { TtlCache } from '#shared/cache';
import * as memberships from '#shared/db/membership';
import { type PushTarget, targetOf, type UserTargets, userTargets, WEB_PUSH_FAILURE_GATE } from '#shared/db/push';
import { rosterEntryDeleteOlderPart, rosterEntryDeletePart, rosterEntryPutPart } from '#shared/db/push-roster';
import { setRoomWakeFlag } from '#shared/db/room';
import { isConditionFailure, type TransactPart, transactWrite } from '#shared/db/transact';
import type { DomainEvent } from '#shared/events';
import { countMetric } from '#shared/metrics';

/**
 * The copies of a user's sendable targets in the push rosters of the user's rooms
 * (docs/data-model.md, "Push"). A target changes rarely and a message is sent often, so the cost
 * sits on the change: every change re-writes the user's roster entries, and a message finds all
 * its recipients in one Query (`functions/domain/push/dispatch.ts`). Membership changes reach the
 * rosters as events (`room.member_joined`, `room.member_left`), so the rooms area never calls push.
 *
 * Every roster write is conditional twice over: on the membership (a copy is never written for a
 * member who has left, however late a sync runs) and on the version of the user's targets it was
 * made from (a sync that read older targets never overwrites a newer copy).
 */

/** Every device, and the subscriptions the failure gate has not closed. */
const sendable = (targets: UserTargets): PushTarget[] =>
  targets.items.filter((item) => !('failure_count' in item) || item.failure_count < WEB_PUSH_FAILURE_GATE).map(targetOf);

/** Rooms written at once: a user in many rooms must not open hundreds of requests together. */
const ROOM_WRITE_CONCURRENCY = 8;

/** Writes all or nothing, where a refused condition means "nothing to do" (a newer copy, or the membership changed). */
async function writeUnlessRefused(parts: readonly TransactPart[]): Promise<void> {
  try {
    await transactWrite(parts);
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** A room deleted and made again under its id within this long may miss the flag: its pushes then wait for the next put. */
const FLAGGED_ROOMS_TTL_MS = 10 * 60_000;
/** Rooms this instance has flagged (`pushTargets` is never cleared, so once is enough). */
const flaggedRooms = new TtlCache<true>(FLAGGED_ROOMS_TTL_MS);

/** The room's `pushTargets` flag, which lets its messages wake the push dispatcher (`functions/wiring/push.ts`). */
async function flagPushTargets(projectId: string, roomId: string): Promise<void> {
  const key = `${projectId}|${roomId}`;
  if (flaggedRooms.get(key)) return;
  await setRoomWakeFlag(projectId, roomId, 'pushTargets');
  forgetRoomAccess(projectId, roomId);
  flaggedRooms.set(key, true);
}

/** Writes (or removes) the user's copy in one room, while they are a member. */
async function writeCopy(projectId: string, roomId: string, userId: string, targets: UserTargets): Promise<void> {
  const copy = sendable(targets);
  // Before the entry: a message between the two then wakes the push dispatcher for nothing. Senders
  // whose cached room predates the flag still miss it for up to CACHE_TTL_MS (docs/architecture.md).
  if (copy.length > 0) await flagPushTargets(projectId, roomId);
  await writeUnlessRefused(
    copy.length > 0
      ? [memberships.isMemberCheck(projectId, roomId, userId), rosterEntryPutPart(projectId, roomId, userId, copy, targets.version)]
      : [rosterEntryDeleteOlderPart(projectId, roomId, userId, targets.version)],
  );
}

async function writeCopies(projectId: string, roomIds: readonly string[], userId: string, targets: UserTargets): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < roomIds.length) await writeCopy(projectId, roomIds[next++] as string, userId, targets);
  };
  await Promise.all(Array.from({ length: Math.min(ROOM_WRITE_CONCURRENCY, roomIds.length) }, worker));
}

/** Re-writes the user's copy in every room they belong to from their current targets. Idempotent. */
export async function syncRosters(projectId: string, userId: string): Promise<void> {
  const [targets, rooms] = await Promise.all([userTargets(projectId, userId), memberships.allUserRoomIds(projectId, userId)]);
  await writeCopies(projectId, rooms, userId, targets);
}

/**
 * Brings the user's entry in one room's roster in line with the membership as it is now, not as
 * the event says: so events handled twice, late or out of order (a leave before the join it
 * follows) leave the roster right. A member with sendable targets gets a copy; a user who is no
 * longer a member loses theirs, unless they joined again meanwhile (their join's event writes it).
 */
export async function syncRosterEntry(projectId: string, roomId: string, userId: string): Promise<void> {
  const [targets, membership] = await Promise.all([
    userTargets(projectId, userId),
    memberships.findMembership(projectId, roomId, userId, { consistent: true }),
  ]);
  if (!membership) {
    await writeUnlessRefused([memberships.isNotMemberCheck(projectId, roomId, userId), rosterEntryDeletePart(projectId, roomId, userId)]);
  } else if (sendable(targets).length > 0) {
    await writeCopy(projectId, roomId, userId, targets);
  }
}

/** The push side of a membership change (the `PushRosterKeeper` subscriber). */
export async function rosterFollowsMembership(event: DomainEvent<'room.member_joined' | 'room.member_left'>): Promise<void> {
  await syncRosterEntry(event.projectId, event.payload.roomId, event.payload.userId);
  countMetric('push_roster_synced');
}
