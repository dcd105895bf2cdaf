import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import { deleteAll, putAll } from '#shared/db/batch';
import { db, tableName } from '#shared/db/client';
import {
  CONNECTION_SK_PREFIX,
  CONNECTION_TTL_SECONDS,
  type Connection,
  type ConnectionRef,
  connectionItem,
  connectionLookupKey,
  connectionRef,
  legacyRoomConnectionKey,
  ROOM_LIST_ATTRIBUTE,
  roomConnectionsPk,
  roomCounterKey,
  roomListEntries,
  roomListEntry,
  roomListShardKey,
  roomUserCounterKey,
  userConnectionKey,
  userConnectionsPk,
  userCounterKey,
} from '#shared/db/connection';
import { queryAll } from '#shared/db/query';
import { isConditionFailure } from '#shared/db/transact';
import { logger } from '#shared/logger';

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

/** Adds `delta` to a counter; a decrement never goes below zero (a lost `$disconnect` must not make a room look empty twice). */
async function addToCounter(key: { pk: string; sk: string }, delta: 1 | -1): Promise<number | undefined> {
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: delta > 0 ? 'ADD #n :delta SET #ttl = :ttl' : 'ADD #n :delta',
        ...(delta < 0 ? { ConditionExpression: '#n > :zero' } : {}),
        ExpressionAttributeNames: { '#n': 'connections', ...(delta > 0 ? { '#ttl': 'ttl' } : {}) },
        ExpressionAttributeValues: {
          ':delta': delta,
          ...(delta > 0 ? { ':ttl': nowSeconds() + CONNECTION_TTL_SECONDS } : { ':zero': 0 }),
        },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    return Number(Attributes?.connections ?? 0);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

async function countChange(connection: Connection, delta: 1 | -1): Promise<PresenceChange> {
  const edge = delta > 0 ? 1 : 0;
  const [user, room, roomUser] = await Promise.all([
    addToCounter(userCounterKey(connection.projectId, connection.userId), delta),
    connection.roomId ? addToCounter(roomCounterKey(connection.projectId, connection.roomId), delta) : undefined,
    connection.roomId ? addToCounter(roomUserCounterKey(connection.projectId, connection.roomId, connection.userId), delta) : undefined,
  ]);
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
 * Sets a counter to the live count, but only if it still holds the value this caller saw, so a
 * concurrent connect or disconnect in between wins and nothing is undercounted.
 */
async function repairCounter(key: { pk: string; sk: string }, seen: number, live: number): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: 'SET #n = :live',
        ConditionExpression: '#n = :seen',
        ExpressionAttributeNames: { '#n': 'connections' },
        ExpressionAttributeValues: { ':live': live, ':seen': seen },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
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
      ? repairCounter(roomUserCounterKey(projectId, roomId, userId), change.roomUserCount ?? 0, 1)
      : false,
    !change.occupied && refs.length === 1 && (change.roomCount ?? 0) > 1
      ? repairCounter(roomCounterKey(projectId, roomId), change.roomCount ?? 0, 1)
      : false,
  ]);
  return { ...change, joined: change.joined || joined, occupied: change.occupied || occupied };
}

/**
 * Stores a new connection (lookup, room list, user list) and counts it in. When any of those
 * writes fails, the rest are undone before the error goes on: `$connect` then refuses the upgrade,
 * and no `$disconnect` would ever come to take a half-stored connection out again.
 */
export async function registerConnection(input: Omit<Connection, 'connectedAt' | 'ttl'>): Promise<PresenceChange> {
  const connection: Connection = { ...input, connectedAt: new Date().toISOString(), ttl: nowSeconds() + CONNECTION_TTL_SECONDS };
  const ref: ConnectionRef = {
    connectionId: connection.connectionId,
    userId: connection.userId,
    channel: connection.channel,
    ...(connection.roomId ? { roomId: connection.roomId } : {}),
    ttl: connection.ttl,
  };
  const [stored, listed, counted] = await Promise.allSettled([
    putAll([
      { ...connectionLookupKey(connection.connectionId), ...connection },
      { ...userConnectionKey(connection.projectId, connection.userId, connection.connectionId), ...ref },
    ]),
    connection.roomId ? addToRoomList(connection.projectId, connection.roomId, connection) : undefined,
    countChange(connection, 1),
  ]);
  if (counted.status === 'fulfilled' && stored.status === 'fulfilled' && listed.status === 'fulfilled') return counted.value;
  const failure = [stored, listed, counted].find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
  // Undone through the lookup item, as a disconnect would be; without it (its write failed), the counters cannot be.
  await dropConnection(connection.connectionId).catch((error) =>
    logger.error('undoing a half-stored connection failed', { error: error as Error, connectionId: connection.connectionId }),
  );
  throw failure.reason;
}

/** The shard keeps the latest expiry of its entries, so TTL sweeps it only once every entry is past. */
async function addToRoomList(projectId: string, roomId: string, connection: Connection): Promise<void> {
  await db.send(
    new UpdateCommand({
      TableName: tableName,
      Key: roomListShardKey(projectId, roomId, connection.connectionId),
      UpdateExpression: 'ADD #list :entry SET #ttl = :ttl',
      ExpressionAttributeNames: { '#list': ROOM_LIST_ATTRIBUTE, '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':entry': new Set([roomListEntry(connection)]), ':ttl': connection.ttl },
    }),
  );
}

/**
 * Takes entries out of one shard. The condition keeps an update from creating an empty shard
 * (one that TTL already swept, or never held them), which nothing would ever remove.
 */
async function removeFromRoomList(key: { pk: string; sk: string }, entries: readonly string[]): Promise<void> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: 'DELETE #list :entries',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#list': ROOM_LIST_ATTRIBUTE },
        ExpressionAttributeValues: { ':entries': new Set(entries) },
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) return;
    throw error;
  }
}

export async function findConnection(connectionId: string, options: { consistent?: boolean } = {}): Promise<Connection | undefined> {
  const cached = options.consistent ? undefined : connectionCache.get(connectionId);
  if (cached) return cached;
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: connectionLookupKey(connectionId), ConsistentRead: options.consistent }),
  );
  if (!Item) return undefined;
  const connection = connectionItem.parse(Item);
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
  let Attributes: Record<string, unknown> | undefined;
  const graceCutoff = new Date(Date.now() - HANDSHAKE_GRACE_MS).toISOString();
  try {
    ({ Attributes } = await db.send(
      new DeleteCommand({
        TableName: tableName,
        Key: connectionLookupKey(connectionId),
        // The condition, not just ALL_OLD, makes the second of two racing deletes fail.
        ConditionExpression: options.onlyIfPastHandshake ? 'attribute_exists(pk) AND connectedAt < :cutoff' : 'attribute_exists(pk)',
        ...(options.onlyIfPastHandshake ? { ExpressionAttributeValues: { ':cutoff': graceCutoff } } : {}),
        ReturnValues: 'ALL_OLD',
      }),
    ));
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
  if (!Attributes) return undefined;
  const connection = connectionItem.parse(Attributes);
  const [, , change] = await Promise.all([
    deleteAll([
      userConnectionKey(connection.projectId, connection.userId, connectionId),
      // Connections opened before the packed list: in the same batch, so no request more.
      ...(connection.roomId ? [legacyRoomConnectionKey(connection.projectId, connection.roomId, connectionId)] : []),
    ]),
    connection.roomId
      ? removeFromRoomList(roomListShardKey(connection.projectId, connection.roomId, connectionId), [roomListEntry(connection)])
      : undefined,
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
  const shards = new Map<string, { key: { pk: string; sk: string }; entries: string[] }>();
  for (const ref of orphans) {
    const key = roomListShardKey(projectId, ref.roomId as string, ref.connectionId);
    const shard = shards.get(`${key.pk}\n${key.sk}`) ?? { key, entries: [] };
    shard.entries.push(roomListEntry(ref));
    shards.set(`${key.pk}\n${key.sk}`, shard);
  }
  await Promise.all([...shards.values()].map(({ key, entries }) => removeFromRoomList(key, entries)));
}

/** One partition of a user's connection refs, paged past 1 MB, expired ones left out. */
async function queryUserRefs(pk: string): Promise<ConnectionRef[]> {
  const now = nowSeconds();
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': pk, ':prefix': CONNECTION_SK_PREFIX },
  });
  // Expired but not yet swept by TTL: API Gateway has closed it.
  return items.map((raw) => connectionRef.parse(raw)).filter((ref) => ref.ttl > now);
}

/** Expired entries swept from one shard per read, at most: a bound on what a fan-out spends on cleanup. */
const MAX_PRUNED_PER_SHARD = 50;

/**
 * Every live connection of a room: one Query of its list shards (paged past 1 MB), whatever the
 * room's size, and of any connection items an earlier release stored (see `ROOM_LIST_SK_PREFIX`).
 * `consistent` when the caller just wrote one of them and must see it (the welcome snapshot).
 * Entries past their TTL are API Gateway's closed connections whose `$disconnect` never came: left
 * out, and taken off their shard so the list does not grow with them.
 */
export async function roomConnections(projectId: string, roomId: string, options: { consistent?: boolean } = {}): Promise<ConnectionRef[]> {
  const now = nowSeconds();
  const shards = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': roomConnectionsPk(projectId, roomId), ':prefix': CONNECTION_SK_PREFIX },
    ConsistentRead: options.consistent,
  });
  const refs: ConnectionRef[] = [];
  const pruning: Promise<void>[] = [];
  for (const shard of shards) {
    const expired: string[] = [];
    const entries = roomListEntries(shard, (entry) => logger.warn('malformed room list entry', { projectId, roomId, entry }));
    for (const { connectionId, userId, ttl, entry } of entries) {
      if (ttl > now) refs.push({ connectionId, userId, channel: 'room', roomId, ttl });
      // An earlier release's item (no set entry) is left to TTL.
      else if (entry && expired.length < MAX_PRUNED_PER_SHARD) expired.push(entry);
    }
    if (expired.length > 0) pruning.push(removeFromRoomList({ pk: String(shard.pk), sk: String(shard.sk) }, expired));
  }
  // The list is already known: a failed sweep is retried by the next read, never the caller's failure.
  for (const outcome of await Promise.allSettled(pruning)) {
    if (outcome.status === 'rejected')
      logger.warn('pruning expired room list entries failed', { projectId, roomId, error: outcome.reason });
  }
  return refs;
}

/** A user's live connections, room and user channel alike, or only one channel kind. */
export async function userConnections(projectId: string, userId: string, channel?: Connection['channel']): Promise<ConnectionRef[]> {
  const refs = await queryUserRefs(userConnectionsPk(projectId, userId));
  return channel ? refs.filter((ref) => ref.channel === channel) : refs;
}

/** The presence view of a connection list: distinct users, in a stable order. */
export const membersOf = (refs: readonly ConnectionRef[]) => [...new Set(refs.map((ref) => ref.userId))].sort();
