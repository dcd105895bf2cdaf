import { config } from '#shared/config';
import type { Connection, ConnectionRef } from '#shared/db/connection';
import { dropConnection, membersOf, type PresenceChange, roomConnections } from './connections';
import { postFrames } from './fan-out';
import { publishRealtimeEvents, type RealtimeEvent } from './room-events';
import { notifyUserWatchers } from './watch-notifications';

export interface Departure {
  readonly connection: Connection;
  readonly change: PresenceChange;
}

/**
 * Sends presence frames in order to a room's connections. Connections found gone here are only
 * forgotten, not announced again, so a room full of stale connections cannot recurse.
 */
async function postInOrder(refs: readonly ConnectionRef[], frames: readonly unknown[]): Promise<void> {
  const ids = refs.map((ref) => ref.connectionId);
  const gone = new Set<string>();
  for (const frame of frames) {
    const outcome = await postFrames(
      ids.filter((id) => !gone.has(id)),
      frame,
    );
    for (const id of outcome.gone) gone.add(id);
  }
  await Promise.all([...gone].map((id) => dropConnection(id, { onlyIfPastHandshake: true })));
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
): Promise<void> {
  const work: Promise<unknown>[] = [];
  if (connection.roomId) {
    const roomId = connection.roomId;
    const subscriptionCount = refs.length;
    if (subscriptionCount <= config.REALTIME_PRESENCE_MAX_CONNECTIONS) {
      const frames: unknown[] = [];
      if (change.joined) {
        frames.push({ type: 'member_joined', roomId, userId: connection.userId, subscriptionCount });
        frames.push({ type: 'presence', roomId, members: membersOf(refs), subscriptionCount });
      }
      frames.push({ type: 'subscription_count', roomId, subscriptionCount });
      work.push(
        postInOrder(
          refs.filter((ref) => ref.connectionId !== connection.connectionId),
          frames,
        ),
      );
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
 * Tells rooms that connections left: per room one Query of who is still there, a `member_left`
 * per user whose last connection it was, then `presence` and `subscription_count`; the matching
 * webhook events; `offline` to watchers of users who have no connection left anywhere.
 */
export async function announceDepartures(departures: readonly Departure[]): Promise<void> {
  const byRoom = new Map<string, Departure[]>();
  for (const departure of departures) {
    const { projectId, roomId } = departure.connection;
    if (!roomId) continue;
    const key = `${projectId}\n${roomId}`;
    byRoom.set(key, [...(byRoom.get(key) ?? []), departure]);
  }
  const work: Promise<unknown>[] = departures
    .filter((departure) => departure.change.offline)
    .map((departure) => notifyUserWatchers(departure.connection.projectId, departure.connection.userId, 'offline'));
  for (const group of byRoom.values()) {
    const { projectId, roomId } = (group[0] as Departure).connection;
    if (!roomId) continue;
    work.push(
      (async () => {
        const refs = await roomConnections(projectId, roomId);
        const subscriptionCount = refs.length;
        const leavers = [...new Set(group.filter((d) => d.change.left).map((d) => d.connection.userId))];
        if (refs.length > 0 && subscriptionCount <= config.REALTIME_PRESENCE_MAX_CONNECTIONS) {
          const frames: unknown[] = leavers.map((userId) => ({ type: 'member_left', roomId, userId, subscriptionCount }));
          if (leavers.length > 0) frames.push({ type: 'presence', roomId, members: membersOf(refs), subscriptionCount });
          frames.push({ type: 'subscription_count', roomId, subscriptionCount });
          await postInOrder(refs, frames);
        }
        const at = new Date().toISOString();
        const events: RealtimeEvent[] = leavers.map((userId) => ({ type: 'member_left', payload: { roomId, userId, subscriptionCount } }));
        events.push({ type: 'subscription_count', payload: { roomId, subscriptionCount } });
        if (group.some((d) => d.change.vacated)) events.push({ type: 'room.vacated', payload: { roomId, at } });
        await publishRealtimeEvents(projectId, events);
      })(),
    );
  }
  await Promise.all(work);
}

/**
 * Forgets connections API Gateway reported gone (410) and announces whatever that changed; a
 * connection still inside its handshake grace is kept (its 410 only meant "not open yet").
 */
export async function forgetGone(connectionIds: readonly string[]): Promise<void> {
  if (connectionIds.length === 0) return;
  const drops = await Promise.all(connectionIds.map((id) => dropConnection(id, { onlyIfPastHandshake: true })));
  await announceDepartures(drops.filter((drop): drop is Departure => drop !== undefined));
}
