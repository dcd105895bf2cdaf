import { config } from '#shared/config';
import type { Connection, ConnectionRef } from '#shared/db/connection';
import { dropConnection, membersOf, type PresenceChange, roomConnections, unlistOrphans } from './connections';
import { postFrames } from './fan-out';
import { publishRealtimeEvents, type RealtimeEvent } from './room-events';
import { notifyUserWatchers } from './watch-notifications';

export interface Departure {
  readonly connection: Connection;
  readonly change: PresenceChange;
}

/**
 * Sends presence frames in order to a room's connections and returns the ids found gone (410).
 */
async function postInOrder(refs: readonly ConnectionRef[], frames: readonly unknown[]): Promise<string[]> {
  const ids = refs.map((ref) => ref.connectionId);
  const gone = new Set<string>();
  for (const frame of frames) {
    const outcome = await postFrames(
      ids.filter((id) => !gone.has(id)),
      frame,
    );
    for (const id of outcome.gone) gone.add(id);
  }
  return [...gone];
}

/**
 * Tells a room that a connection arrived: `subscription_count` always, `member_joined` and the new
 * `presence` list when it was the user's first connection. Rooms past
 * `REALTIME_PRESENCE_MAX_CONNECTIONS` skip the frames (every connect would otherwise cost a post
 * per connection) but still raise the webhook events.
 */
export async function announceArrival(
  connection: Pick<Connection, 'projectId' | 'roomId' | 'userId' | 'connectionId'>,
  change: PresenceChange,
  refs: readonly ConnectionRef[],
  options: { userInfo?: Record<string, unknown> } = {},
): Promise<void> {
  const work: Promise<unknown>[] = [];
  if (connection.roomId) {
    const roomId = connection.roomId;
    const subscriptionCount = refs.length;
    if (subscriptionCount <= config.REALTIME_PRESENCE_MAX_CONNECTIONS) {
      const frames: unknown[] = [];
      if (change.joined) {
        // `userInfo`: what a Pusher presence subscriber gave as `user_info` (its `member_added` carries it).
        const userInfo = options.userInfo ? { userInfo: options.userInfo } : {};
        frames.push({ type: 'member_joined', roomId, userId: connection.userId, subscriptionCount, ...userInfo });
        frames.push({ type: 'presence', roomId, members: membersOf(refs), subscriptionCount });
      }
      frames.push({ type: 'subscription_count', roomId, subscriptionCount });
      const others = refs.filter((ref) => ref.connectionId !== connection.connectionId);
      work.push(postInOrder(others, frames).then((gone) => forgetGone(gone, { frames: false })));
    }
    const at = new Date().toISOString();
    const events: RealtimeEvent[] = [];
    if (change.occupied) events.push({ type: 'room.occupied', payload: { roomId, at } });
    if (change.joined) events.push({ type: 'member_joined', payload: { roomId, userId: connection.userId, subscriptionCount } });
    events.push({ type: 'subscription_count', payload: { roomId, subscriptionCount } });
    work.push(publishRealtimeEvents(connection.projectId, events));
  }
  if (change.online) work.push(notifyUserWatchers(connection.projectId, connection.userId, 'online'));
  await Promise.all(work);
}

/**
 * Tells rooms that connections left: a `member_left` per user whose last connection it was, then
 * `presence` and `subscription_count`; the matching webhook events; `offline` to watchers of users
 * who have no connection left anywhere. The room's list is read once per room, and not at all
 * when the counter says the room is past the presence limit (no frames go out there).
 */
export async function announceDepartures(departures: readonly Departure[], options: { frames?: boolean } = {}): Promise<void> {
  const sendFrames = options.frames ?? true;
  const byRoom = new Map<string, { projectId: string; roomId: string; group: Departure[] }>();
  for (const departure of departures) {
    const { projectId, roomId } = departure.connection;
    if (!roomId) continue;
    const key = `${projectId}\n${roomId}`;
    const entry = byRoom.get(key) ?? { projectId, roomId, group: [] };
    entry.group.push(departure);
    byRoom.set(key, entry);
  }
  const work: Promise<unknown>[] = departures
    .filter((departure) => departure.change.offline)
    .map((departure) => notifyUserWatchers(departure.connection.projectId, departure.connection.userId, 'offline'));
  for (const { projectId, roomId, group } of byRoom.values()) {
    work.push(
      (async () => {
        const leavers = [...new Set(group.filter((d) => d.change.left).map((d) => d.connection.userId))];
        const counted = group.map((d) => d.change.roomCount).filter((count): count is number => count !== undefined);
        // Each decrement returned the count after it: the smallest is the latest.
        let subscriptionCount = counted.length > 0 ? Math.min(...counted) : undefined;
        const framesWanted =
          sendFrames && (subscriptionCount === undefined || subscriptionCount <= config.REALTIME_PRESENCE_MAX_CONNECTIONS);
        if (framesWanted || subscriptionCount === undefined) {
          // An eventually consistent read may still list the departed: they are left out by id.
          const departed = new Set(group.map((d) => d.connection.connectionId));
          const refs = (await roomConnections(projectId, roomId)).filter((ref) => !departed.has(ref.connectionId));
          subscriptionCount = refs.length;
          if (framesWanted && refs.length > 0 && refs.length <= config.REALTIME_PRESENCE_MAX_CONNECTIONS) {
            const frames: unknown[] = leavers.map((userId) => ({ type: 'member_left', roomId, userId, subscriptionCount }));
            if (leavers.length > 0) frames.push({ type: 'presence', roomId, members: membersOf(refs), subscriptionCount });
            frames.push({ type: 'subscription_count', roomId, subscriptionCount });
            await forgetGone(await postInOrder(refs, frames), { frames: false });
          }
        }
        const at = new Date().toISOString();
        const events: RealtimeEvent[] = leavers.map((userId) => ({
          type: 'member_left',
          payload: { roomId, userId, subscriptionCount: subscriptionCount ?? 0 },
        }));
        events.push({ type: 'subscription_count', payload: { roomId, subscriptionCount: subscriptionCount ?? 0 } });
        if (group.some((d) => d.change.vacated)) events.push({ type: 'room.vacated', payload: { roomId, at } });
        await publishRealtimeEvents(projectId, events);
      })(),
    );
  }
  await Promise.all(work);
}

/**
 * Forgets connections and announces whatever that changed; answers the ids this call dropped.
 * `onlyIfPastHandshake` for 410s, where a connection still inside its handshake grace is kept (its
 * 410 only meant "not open yet").
 */
export async function forgetConnections(
  connectionIds: readonly string[],
  options: { onlyIfPastHandshake?: boolean; frames?: boolean } = {},
): Promise<Set<string>> {
  if (connectionIds.length === 0) return new Set();
  const drops = await Promise.all(connectionIds.map((id) => dropConnection(id, { onlyIfPastHandshake: options.onlyIfPastHandshake })));
  const departures = drops.filter((drop): drop is Departure => drop !== undefined);
  await announceDepartures(departures, { frames: options.frames });
  return new Set(departures.map((departure) => departure.connection.connectionId));
}

/**
 * Forgets connections API Gateway reported gone (410). Those found while presence frames went out
 * are forgotten with `frames: false`: their departures raise the webhook events but no frames, so
 * a room full of stale connections cannot recurse. `listed` is the list a broadcast posted to: a
 * gone connection of it that had no lookup left to drop is taken off that list (`unlistOrphans`).
 * Presence frames pass none: they go out while departures are still being stored, above all in a
 * wave of disconnects, where most lookups without their entry removed yet are not orphans but
 * `$disconnect`s in progress.
 */
export async function forgetGone(
  connectionIds: readonly string[],
  options: { frames?: boolean; listed?: { projectId: string; refs: readonly ConnectionRef[] } } = {},
): Promise<void> {
  const dropped = await forgetConnections(connectionIds, { frames: options.frames, onlyIfPastHandshake: true });
  if (!options.listed) return;
  const orphans = new Set(connectionIds.filter((id) => !dropped.has(id)));
  if (orphans.size > 0)
    await unlistOrphans(
      options.listed.projectId,
      options.listed.refs.filter((ref) => orphans.has(ref.connectionId)),
    );
}
