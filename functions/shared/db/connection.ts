import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { logger } from '#shared/logger';
import { parseSubscriptionId } from '#shared/pusher-protocol';
import * as z from '#shared/schema';
import { deleteAll, putAll } from './batch';
import { db, tableName } from './client';
import { roomPk, userPk } from './keys';
import { queryAll } from './query';
import { isConditionFailure } from './transact';

/**
 * A WebSocket connection. `channel: room` connections belong to one room, `channel: user`
 * connections are a user's private channel. Each is stored up to three times:
 *  - under its connection id (API Gateway's `$disconnect` carries nothing else): the full record;
 *  - in its room's packed list (`room` only), for fan-out: one Query per frame, see `roomListShardKey`;
 *  - under its user, so a user's connections can be listed and closed, and user-channel frames found.
 * The id-keyed item is the one key not prefixed by a project: it only points back to tenant-scoped ones.
 *
 * A Pusher-protocol socket (`channel: pusher`) is stored by its id alone: it has no user until it
 * subscribes, and each subscription is a `room` connection of its own (`#shared/pusher-protocol`,
 * `subscriptionId`), keyed beside it so that its close finds them all.
 */
export const connectionItem = z.object({
  projectId: z.string(),
  channel: z.enum(['room', 'user', 'pusher']),
  roomId: z.optional(z.string()),
  userId: z.string(),
  /** The token's roles at connect time; frames on this connection act with them. */
  roles: z.array(z.string()),
  connectionId: z.string(),
  connectedAt: z.string(),
  ttl: z.number().check(z.int()),
  /** The client asked for batch frames in coalesced rooms (`batch=1` on connect); room channel only. */
  batch: z.optional(z.literal(true)),
});
export type Connection = z.infer<typeof connectionItem>;

/** What fan-out and listing need of a connection: a user list item, or an entry of a room's list with its room. */
export const connectionRef = z.object({
  connectionId: z.string(),
  userId: z.string(),
  channel: z.enum(['room', 'user']),
  roomId: z.optional(z.string()),
  ttl: z.number().check(z.int()),
  /** Takes batch frames in a coalesced room (`batch=1`); carried by the room list entry, so a fan-out needs no other read. */
  batch: z.optional(z.literal(true)),
});
export type ConnectionRef = z.infer<typeof connectionRef>;

export const CONNECTION_SK_PREFIX = 'C#';
export const roomConnectionsPk = (projectId: string, roomId: string) => `${roomPk(projectId, roomId)}#CONNS`;
export const userConnectionsPk = (projectId: string, userId: string) => `${userPk(projectId, userId)}#CONNS`;

/**
 * A room's connection list is packed into `ROOM_LIST_SHARDS` items, each holding a string set
 * `c` of `"<connectionId> <userId> <ttl>"` entries (`ADD` and `DELETE` change a set atomically), so
 * a fan-out reads a handful of items however big the room: every item a Query returns costs the
 * server and the SDK work of its own, and a set is the tersest form of the rest (1,000 connections:
 * about 19 ms of CPU on DynamoDB Local and the SDK as 1,000 items, 2.5 ms as 32 sets). Sharding by
 * connection id bounds each write to one shard, about 1/32 of the list (about 1.4 KB at 1,000
 * connections) rather than all of it.
 *
 * The shards' sort keys (`C#~00` to `C#~31`) sort after every `C#<connectionId>` (base64 has no
 * `~`), so the one Query of the `C#` prefix also returns the item-per-connection form that releases
 * before the packed list stored, until those items expire: connections opened across the upgrade
 * stay listed, and presence stays counted right.
 */
export const ROOM_LIST_SHARDS = 32;
export const ROOM_LIST_SK_PREFIX = `${CONNECTION_SK_PREFIX}~`;
export const ROOM_LIST_ATTRIBUTE = 'c';

/**
 * FNV-1a: a stable spread of connection ids over the shards, the same in every function instance.
 * A disconnect finds its entry's shard again by this, so the count and the hash must never change
 * while entries are stored (a new spread needs a new sort key prefix).
 */
function shardOf(connectionId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < connectionId.length; i++) hash = Math.imul(hash ^ connectionId.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % ROOM_LIST_SHARDS;
}

export const roomListShardKey = (projectId: string, roomId: string, connectionId: string) => ({
  pk: roomConnectionsPk(projectId, roomId),
  sk: `${ROOM_LIST_SK_PREFIX}${String(shardOf(connectionId)).padStart(2, '0')}`,
});

/** A room connection in the item-per-connection form of earlier releases (read and deleted, never written). */
export const legacyRoomConnectionKey = (projectId: string, roomId: string, connectionId: string) => ({
  pk: roomConnectionsPk(projectId, roomId),
  sk: `${CONNECTION_SK_PREFIX}${connectionId}`,
});

/**
 * Connection ids (API Gateway's base64) and user ids (`idSchema`) never hold a space. The entry
 * is rebuilt from the connection record to take it out again, so it must never change form. A
 * fourth field `b` marks a connection that takes batch frames; entries without it read as before.
 */
export const roomListEntry = (connection: { connectionId: string; userId: string; ttl: number; batch?: true }) =>
  `${connection.connectionId} ${connection.userId} ${connection.ttl}${connection.batch ? ' b' : ''}`;

export interface RoomListEntry {
  readonly connectionId: string;
  readonly userId: string;
  readonly ttl: number;
  readonly batch?: true;
  /** As stored, to take it out of its set. */
  readonly entry: string;
}

const legacyRoomItem = z.object({ connectionId: z.string(), userId: z.string(), ttl: z.number().check(z.int()) });

/**
 * The entries of one item of a room's `C#` range: a shard's set (empty once emptied: DynamoDB
 * drops an empty set) or an earlier release's single connection. Entries that do not parse are
 * left out and reported, so one bad entry never stops a room's fan-out.
 */
export function roomListEntries(item: Record<string, unknown>, malformed: (entry: unknown) => void): RoomListEntry[] {
  if (!String(item.sk).startsWith(ROOM_LIST_SK_PREFIX)) {
    const legacy = legacyRoomItem.safeParse(item);
    if (!legacy.success) {
      malformed(item.sk);
      return [];
    }
    return [{ ...legacy.data, entry: '' }];
  }
  const set = item[ROOM_LIST_ATTRIBUTE];
  if (set === undefined) return [];
  if (!(set instanceof Set)) {
    malformed(set);
    return [];
  }
  const entries: RoomListEntry[] = [];
  for (const entry of set as Set<string>) {
    const [connectionId, userId, ttl, flag] = entry.split(' ');
    if (!connectionId || !userId || !ttl || !/^\d+$/.test(ttl)) malformed(entry);
    else entries.push({ connectionId, userId, ttl: Number(ttl), ...(flag === 'b' ? { batch: true as const } : {}), entry });
  }
  return entries;
}

export const userConnectionKey = (projectId: string, userId: string, connectionId: string) => ({
  pk: userConnectionsPk(projectId, userId),
  sk: `${CONNECTION_SK_PREFIX}${connectionId}`,
});
/** A Pusher socket's subscriptions sort under it: `SUB#<channel>` in the socket's partition. */
export const SUBSCRIPTION_SK_PREFIX = 'SUB#';
export function connectionLookupKey(connectionId: string) {
  const subscription = parseSubscriptionId(connectionId);
  if (subscription) return { pk: `CONN#${subscription.connectionId}`, sk: `${SUBSCRIPTION_SK_PREFIX}${subscription.channel}` };
  return { pk: `CONN#${connectionId}`, sk: 'CONN' };
}

/** The subscriptions a Pusher socket holds, as connection ids (`<socket>|<channel>`). */
export async function socketSubscriptionIds(connectionId: string): Promise<string[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': `CONN#${connectionId}`, ':prefix': SUBSCRIPTION_SK_PREFIX },
    ProjectionExpression: 'connectionId',
    ConsistentRead: true,
  });
  return items.map((item) => String(item.connectionId));
}

/** A Pusher socket's own record: its lookup item only, since it has no user or room of its own. */
export async function putSocketRecord(connection: Connection): Promise<void> {
  await db.send(new PutCommand({ TableName: tableName, Item: { ...connectionLookupKey(connection.connectionId), ...connection } }));
}

/**
 * Presence counters, beside the lists they count (sort keys outside `C#`, like `CACHE`, so list
 * Queries skip them). Atomic `ADD`s decide the transitions (first connection of a user joins, last leaves;
 * first of a room occupies, last vacates) without the race a read-then-decide would have.
 */
export const roomCounterKey = (projectId: string, roomId: string) => ({ pk: roomConnectionsPk(projectId, roomId), sk: 'N#ROOM' });
export const ROOM_USER_COUNTER_SK_PREFIX = 'N#U#';
export const roomUserCounterKey = (projectId: string, roomId: string, userId: string) => ({
  pk: roomConnectionsPk(projectId, roomId),
  sk: `${ROOM_USER_COUNTER_SK_PREFIX}${userId}`,
});
/** Users with an open connection to the room: its per-user presence counters above zero, not expired. */
export async function connectedUserIds(projectId: string, roomId: string): Promise<Set<string>> {
  const counters = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :users)',
    FilterExpression: '#n > :zero AND #ttl > :now',
    ExpressionAttributeNames: { '#n': 'connections', '#ttl': 'ttl' },
    ExpressionAttributeValues: {
      ':pk': roomConnectionsPk(projectId, roomId),
      ':users': ROOM_USER_COUNTER_SK_PREFIX,
      ':zero': 0,
      ':now': Math.floor(Date.now() / 1000),
    },
    ProjectionExpression: 'sk',
  });
  return new Set(counters.map((item) => String(item.sk).slice(ROOM_USER_COUNTER_SK_PREFIX.length)));
}
/** The `user_info` each connected user of a room last subscribed with (Pusher presence channels), by user id. */
export async function roomMemberInfos(projectId: string, roomId: string): Promise<Map<string, Record<string, unknown>>> {
  const counters = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :users)',
    FilterExpression: 'attribute_exists(#info)',
    ExpressionAttributeNames: { '#info': 'userInfo' },
    ExpressionAttributeValues: { ':pk': roomConnectionsPk(projectId, roomId), ':users': ROOM_USER_COUNTER_SK_PREFIX },
    ProjectionExpression: 'sk, #info',
    ConsistentRead: true,
  });
  return new Map(
    counters.map((item) => [String(item.sk).slice(ROOM_USER_COUNTER_SK_PREFIX.length), item.userInfo as Record<string, unknown>]),
  );
}
export const userCounterKey = (projectId: string, userId: string) => ({ pk: userConnectionsPk(projectId, userId), sk: 'N#ALL' });

/** API Gateway closes connections after 2 h; the items outlive that a little, then TTL removes them. */
export const CONNECTION_TTL_SECONDS = 2 * 3600 + 600;

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * Stores a new connection's lookup item and its entry in the user's list, in one request. Its
 * room list entry is {@link addToRoomList}'s.
 */
export async function putConnection(connection: Connection): Promise<void> {
  if (connection.channel === 'pusher') throw new Error('A Pusher socket is stored with putSocketRecord');
  const ref: ConnectionRef = {
    connectionId: connection.connectionId,
    userId: connection.userId,
    channel: connection.channel,
    ...(connection.roomId ? { roomId: connection.roomId } : {}),
    ttl: connection.ttl,
    ...(connection.batch ? { batch: true as const } : {}),
  };
  await putAll([
    { ...connectionLookupKey(connection.connectionId), ...connection },
    { ...userConnectionKey(connection.projectId, connection.userId, connection.connectionId), ...ref },
  ]);
}

/** The shard keeps the latest expiry of its entries, so TTL sweeps it only once every entry is past. */
export async function addToRoomList(projectId: string, roomId: string, connection: Connection): Promise<void> {
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
async function removeFromRoomListShard(key: { pk: string; sk: string }, entries: readonly string[]): Promise<void> {
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

/** Takes room connections off their rooms' lists: one update per shard they sit in. */
export async function removeFromRoomLists(
  projectId: string,
  refs: readonly { connectionId: string; userId: string; roomId: string; ttl: number; batch?: true }[],
): Promise<void> {
  const shards = new Map<string, { key: { pk: string; sk: string }; entries: string[] }>();
  for (const ref of refs) {
    const key = roomListShardKey(projectId, ref.roomId, ref.connectionId);
    const shard = shards.get(`${key.pk}\n${key.sk}`) ?? { key, entries: [] };
    shard.entries.push(roomListEntry(ref));
    shards.set(`${key.pk}\n${key.sk}`, shard);
  }
  await Promise.all([...shards.values()].map(({ key, entries }) => removeFromRoomListShard(key, entries)));
}

export async function findConnection(connectionId: string, options: { consistent?: boolean } = {}): Promise<Connection | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: connectionLookupKey(connectionId), ConsistentRead: options.consistent }),
  );
  return Item ? connectionItem.parse(Item) : undefined;
}

/**
 * Deletes a connection's lookup item and answers the record it held, or `undefined` when it was
 * gone already (or, with `connectedBefore`, connected at or after that time and so kept). The
 * condition, not just `ALL_OLD`, makes the second of two racing deletes answer `undefined`.
 */
export async function deleteConnection(connectionId: string, options: { connectedBefore?: string } = {}): Promise<Connection | undefined> {
  let Attributes: Record<string, unknown> | undefined;
  try {
    ({ Attributes } = await db.send(
      new DeleteCommand({
        TableName: tableName,
        Key: connectionLookupKey(connectionId),
        ConditionExpression:
          options.connectedBefore !== undefined ? 'attribute_exists(pk) AND connectedAt < :cutoff' : 'attribute_exists(pk)',
        ...(options.connectedBefore !== undefined ? { ExpressionAttributeValues: { ':cutoff': options.connectedBefore } } : {}),
        ReturnValues: 'ALL_OLD',
      }),
    ));
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
  return Attributes ? connectionItem.parse(Attributes) : undefined;
}

/**
 * Deletes what lists a deleted connection besides its room list entry: the user's list entry, and
 * a room connection item of the form before the packed list (in the same batch, so no request more).
 */
export async function deleteConnectionListings(connection: Connection): Promise<void> {
  await deleteAll([
    userConnectionKey(connection.projectId, connection.userId, connection.connectionId),
    ...(connection.roomId ? [legacyRoomConnectionKey(connection.projectId, connection.roomId, connection.connectionId)] : []),
  ]);
}

/** Expired entries swept from one shard per read, at most: a bound on what a fan-out spends on cleanup. */
const MAX_PRUNED_PER_SHARD = 50;

/**
 * Every live connection of a room: one Query of its list shards (paged past 1 MB), whatever the
 * room's size, and of any connection items an earlier release stored (see `ROOM_LIST_SK_PREFIX`).
 * `consistent` when the caller just wrote one of them and must see it. Entries past their TTL are
 * API Gateway's closed connections whose `$disconnect` never came: left out, and taken off their
 * shard so the list does not grow with them.
 */
export async function roomConnectionRefs(
  projectId: string,
  roomId: string,
  options: { consistent?: boolean } = {},
): Promise<ConnectionRef[]> {
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
    for (const { connectionId, userId, ttl, batch, entry } of entries) {
      if (ttl > now) refs.push({ connectionId, userId, channel: 'room', roomId, ttl, ...(batch ? { batch } : {}) });
      // An earlier release's item (no set entry) is left to TTL.
      else if (entry && expired.length < MAX_PRUNED_PER_SHARD) expired.push(entry);
    }
    if (expired.length > 0) pruning.push(removeFromRoomListShard({ pk: String(shard.pk), sk: String(shard.sk) }, expired));
  }
  // The list is already known: a failed sweep is retried by the next read, never the caller's failure.
  for (const outcome of await Promise.allSettled(pruning)) {
    if (outcome.status === 'rejected')
      logger.warn('pruning expired room list entries failed', { projectId, roomId, error: outcome.reason });
  }
  return refs;
}

/** A user's connection refs (room and user channel), paged past 1 MB, expired ones left out. */
export async function userConnectionRefs(projectId: string, userId: string): Promise<ConnectionRef[]> {
  const now = nowSeconds();
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': userConnectionsPk(projectId, userId), ':prefix': CONNECTION_SK_PREFIX },
  });
  // Expired but not yet swept by TTL: API Gateway has closed it.
  return items.map((raw) => connectionRef.parse(raw)).filter((ref) => ref.ttl > now);
}

/** Adds `delta` to a counter; a decrement never goes below zero (a lost `$disconnect` must not make a room look empty twice). */
async function addToCounter(
  key: { pk: string; sk: string },
  delta: 1 | -1,
  userInfo?: Record<string, unknown>,
): Promise<number | undefined> {
  const info = delta > 0 && userInfo !== undefined;
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: delta > 0 ? `ADD #n :delta SET #ttl = :ttl${info ? ', #info = :info' : ''}` : 'ADD #n :delta',
        ...(delta < 0 ? { ConditionExpression: '#n > :zero' } : {}),
        ExpressionAttributeNames: {
          '#n': 'connections',
          ...(delta > 0 ? { '#ttl': 'ttl' } : {}),
          ...(info ? { '#info': 'userInfo' } : {}),
        },
        ExpressionAttributeValues: {
          ':delta': delta,
          ...(delta > 0 ? { ':ttl': nowSeconds() + CONNECTION_TTL_SECONDS } : { ':zero': 0 }),
          ...(info ? { ':info': userInfo } : {}),
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

/** A connection's presence counters after {@link countConnection}; `undefined` where a decrement found zero (or no room). */
export interface ConnectionCounts {
  readonly user: number | undefined;
  readonly room: number | undefined;
  readonly roomUser: number | undefined;
}

/**
 * Counts a connection in (`1`) or out (`-1`) of its user's, its room's and its user-in-room counters, in parallel.
 * `userInfo` (a Pusher presence subscriber's `user_info`) is kept on the user-in-room counter,
 * where a presence snapshot reads it back ({@link roomMemberInfos}) at no extra write.
 */
export async function countConnection(
  connection: Pick<Connection, 'projectId' | 'userId' | 'roomId'>,
  delta: 1 | -1,
  userInfo?: Record<string, unknown>,
): Promise<ConnectionCounts> {
  const [user, room, roomUser] = await Promise.all([
    addToCounter(userCounterKey(connection.projectId, connection.userId), delta),
    connection.roomId ? addToCounter(roomCounterKey(connection.projectId, connection.roomId), delta) : undefined,
    connection.roomId
      ? addToCounter(roomUserCounterKey(connection.projectId, connection.roomId, connection.userId), delta, userInfo)
      : undefined,
  ]);
  return { user, room, roomUser };
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

/** {@link repairCounter} on the room's counter. */
export const repairRoomCounter = (projectId: string, roomId: string, seen: number, live: number) =>
  repairCounter(roomCounterKey(projectId, roomId), seen, live);

/** {@link repairCounter} on the user's counter in the room. */
export const repairRoomUserCounter = (projectId: string, roomId: string, userId: string, seen: number, live: number) =>
  repairCounter(roomUserCounterKey(projectId, roomId, userId), seen, live);

/**
 * Deletes what is left of a user's connections once they are closed: their list partition (the
 * online counter and any entry a lost `$disconnect` left) and their presence counter in each of
 * `roomIds`. Idempotent; used by GDPR erasure.
 */
export async function deleteUserConnectionRecords(projectId: string, userId: string, roomIds: readonly string[]): Promise<void> {
  const own = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': userConnectionsPk(projectId, userId) },
    ProjectionExpression: 'pk, sk',
  });
  await deleteAll([
    ...own.map((item) => ({ pk: item.pk, sk: item.sk })),
    ...roomIds.map((roomId) => roomUserCounterKey(projectId, roomId, userId)),
  ]);
}
