import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import {
  addToRoomList,
  CONNECTION_TTL_SECONDS,
  type Connection,
  type ConnectionRef,
  countConnection,
  deleteConnection,
  deleteConnectionListings,
  putConnection,
  putSocketRecord,
  findConnection as readConnection,
  removeFromRoomLists,
  repairRoomCounter,
  repairRoomUserCounter,
  roomConnectionRefs,
  userConnectionRefs,
} from '#shared/db/connection';
import { logger } from '#shared/logger';
import { countMetric } from '#shared/metrics';

/**
 * What a connect or disconnect changed, decided by atomic counters: the user's first connection to
 * the room `joined` it, the room's first connection `occupied` it, the user's first connection
 * anywhere brought them `online` (and the reverse on the way out).
 */
export interface PresenceChange {
  readonly joined: boolean;
  readonly left: boolean;
  readonly occupied: boolean;
  readonly vacated: boolean;
  readonly online: boolean;
  readonly offline: boolean;
  /** The room's connection count after this change, when the counter answered. */
  readonly roomCount?: number;
  /** The user's connection count in the room after this change, when the counter answered. */
  readonly roomUserCount?: number;
}

/** Connection records never change, so a few seconds of caching only delays noticing a deletion. */
const connectionCache = new TtlCache<Connection>(config.CACHE_TTL_MS);

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** What a Pusher socket's own record changes: nothing (its subscriptions are connections of their own). */
const NO_CHANGE: PresenceChange = { joined: false, left: false, occupied: false, vacated: false, online: false, offline: false };

async function countChange(connection: Connection, delta: 1 | -1, userInfo?: Record<string, unknown>): Promise<PresenceChange> {
  const edge = delta > 0 ? 1 : 0;
  const { user, room, roomUser } = await countConnection(connection, delta, userInfo);
  return {
    joined: delta > 0 && roomUser === edge,
    left: delta < 0 && roomUser === edge,
    occupied: delta > 0 && room === edge,
    vacated: delta < 0 && room === edge,
    online: delta > 0 && user === edge,
    offline: delta < 0 && user === edge,
    ...(room !== undefined ? { roomCount: room } : {}),
    ...(roomUser !== undefined ? { roomUserCount: roomUser } : {}),
  };
}

/**
 * A connection that vanished without any `$disconnect` and expired by TTL was never counted out,
 * so the counters read one too many and the first connection after it would not count as a join
 * (or an occupancy). Given the room's live list, read consistently after this connection was
 * stored, this sets such counters back to the truth and reports the transitions they hid.
 */
export async function healPresence(
  connection: Pick<Connection, 'projectId' | 'roomId' | 'userId' | 'connectionId'>,
  change: PresenceChange,
  refs: readonly ConnectionRef[],
): Promise<PresenceChange> {
  const { projectId, roomId, userId } = connection;
  if (!roomId) return change;
  const liveForUser = refs.filter((ref) => ref.userId === userId).length;
  const [joined, occupied] = await Promise.all([
    !change.joined && liveForUser === 1 && (change.roomUserCount ?? 0) > 1
      ? repairRoomUserCounter(projectId, roomId, userId, change.roomUserCount ?? 0, 1)
      : false,
    !change.occupied && refs.length === 1 && (change.roomCount ?? 0) > 1
      ? repairRoomCounter(projectId, roomId, change.roomCount ?? 0, 1)
      : false,
  ]);
  return { ...change, joined: change.joined || joined, occupied: change.occupied || occupied };
}

/**
 * Stores a new connection (lookup, room list, user list) and counts it in. When any of those
 * writes fails, the rest are undone before the error goes on: `$connect` then refuses the upgrade,
 * and no `$disconnect` would ever come to take a half-stored connection out again.
 */
export async function registerConnection(
  input: Omit<Connection, 'connectedAt' | 'ttl'>,
  options: { userInfo?: Record<string, unknown> } = {},
): Promise<PresenceChange> {
  const connection: Connection = { ...input, connectedAt: new Date().toISOString(), ttl: nowSeconds() + CONNECTION_TTL_SECONDS };
  if (connection.channel === 'pusher') {
    await putSocketRecord(connection);
    return NO_CHANGE;
  }
  const [stored, listed, counted] = await Promise.allSettled([
    putConnection(connection),
    connection.roomId ? addToRoomList(connection.projectId, connection.roomId, connection) : undefined,
    countChange(connection, 1, options.userInfo),
  ]);
  if (counted.status === 'fulfilled' && stored.status === 'fulfilled' && listed.status === 'fulfilled') {
    countMetric('connections', 1, { projectId: connection.projectId });
    return counted.value;
  }
  const failure = [stored, listed, counted].find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
  // Undone through the lookup item, as a disconnect would be; without it (its write failed), the counters cannot be.
  await dropConnection(connection.connectionId).catch((error) =>
    logger.error('undoing a half-stored connection failed', { error: error as Error, connectionId: connection.connectionId }),
  );
  throw failure.reason;
}

export async function findConnection(connectionId: string, options: { consistent?: boolean } = {}): Promise<Connection | undefined> {
  const cached = options.consistent ? undefined : connectionCache.get(connectionId);
  if (cached) return cached;
  const connection = await readConnection(connectionId, options);
  if (!connection) return undefined;
  connectionCache.set(connectionId, connection);
  return connection;
}

/**
 * A connection is stored during `$connect`, before API Gateway completes the handshake, and a post
 * to it until then fails with 410 exactly like a post to a dead one. A 410 within this long of
 * the connect therefore does not mean gone.
 */
export const HANDSHAKE_GRACE_MS = 10_000;

/**
 * Forgets a connection and counts it out. Deleting the lookup item with `ALL_OLD` makes this
 * idempotent: `$disconnect`, a 410 on post and an explicit close may all race, and only the one
 * that actually removed the record changes the counters. `onlyIfPastHandshake` (for 410s) leaves
 * a connection younger than `HANDSHAKE_GRACE_MS` alone.
 */
export async function dropConnection(
  connectionId: string,
  options: { onlyIfPastHandshake?: boolean } = {},
): Promise<{ connection: Connection; change: PresenceChange } | undefined> {
  connectionCache.delete(connectionId);
  const connection = await deleteConnection(
    connectionId,
    options.onlyIfPastHandshake ? { connectedBefore: new Date(Date.now() - HANDSHAKE_GRACE_MS).toISOString() } : {},
  );
  if (!connection) return undefined;
  if (connection.channel === 'pusher') return { connection, change: NO_CHANGE };
  const [, , change] = await Promise.all([
    deleteConnectionListings(connection),
    connection.roomId ? removeFromRoomLists(connection.projectId, [{ ...connection, roomId: connection.roomId }]) : undefined,
    // A connection past its TTL was never counted out by API Gateway; counting it out now is still right.
    countChange(connection, -1),
  ]);
  return { connection, change };
}

/**
 * Takes listed connections that have no lookup item off their rooms' lists. A disconnect whose list
 * write failed after it deleted the lookup leaves such an entry, and so does a connect whose lookup
 * write failed (its undo finds nothing to undo): API Gateway answers 410 for them, and without this
 * every fan-out would post to them until their TTL, hours later. An entry still inside its
 * handshake grace is left alone: its connect may not have stored the lookup yet.
 */
export async function unlistOrphans(projectId: string, refs: readonly ConnectionRef[]): Promise<void> {
  const graceEnd = nowSeconds() - HANDSHAKE_GRACE_MS / 1000;
  // The entry's TTL was set at connect: connected at ttl − CONNECTION_TTL_SECONDS.
  const orphans = refs.filter((ref) => ref.roomId && ref.ttl - CONNECTION_TTL_SECONDS <= graceEnd);
  if (orphans.length === 0) return;
  logger.warn('room list entries without a connection removed', { projectId, connectionIds: orphans.map((ref) => ref.connectionId) });
  await removeFromRoomLists(
    projectId,
    orphans.map((ref) => ({ ...ref, roomId: ref.roomId as string })),
  );
}

/**
 * Every live connection of a room, whatever its size, in one paged Query; expired entries are left
 * out and swept. `consistent` when the caller just wrote one of them and must see it (the welcome
 * snapshot).
 */
export const roomConnections = roomConnectionRefs;

/** A user's live connections, room and user channel alike, or only one channel kind. */
export async function userConnections(projectId: string, userId: string, channel?: Connection['channel']): Promise<ConnectionRef[]> {
  const refs = await userConnectionRefs(projectId, userId);
  return channel ? refs.filter((ref) => ref.channel === channel) : refs;
}

/** The presence view of a connection list: distinct users, in a stable order. */
export const membersOf = (refs: readonly ConnectionRef[]) => [...new Set(refs.map((ref) => ref.userId))].sort();
