import * as z from '#shared/schema';
import { roomPk, userPk } from './keys';
import { queryAll } from './query';

/**
 * A WebSocket connection. `channel: room` connections belong to one room, `channel: user`
 * connections are a user's private channel. Each is stored up to three times:
 *  - under its connection id (API Gateway's `$disconnect` carries nothing else): the full record;
 *  - in its room's packed list (`room` only), for fan-out: one Query per frame, see `roomListShardKey`;
 *  - under its user, so a user's connections can be listed and closed, and user-channel frames found.
 * The id-keyed item is the one key not prefixed by a project: it only points back to tenant-scoped ones.
 */
export const connectionItem = z.object({
  projectId: z.string(),
  channel: z.enum(['room', 'user']),
  roomId: z.optional(z.string()),
  userId: z.string(),
  /** The token's roles at connect time; frames on this connection act with them. */
  roles: z.array(z.string()),
  connectionId: z.string(),
  connectedAt: z.string(),
  ttl: z.number().check(z.int()),
});
export type Connection = z.infer<typeof connectionItem>;

/** What fan-out and listing need of a connection: a user list item, or an entry of a room's list with its room. */
export const connectionRef = z.object({
  connectionId: z.string(),
  userId: z.string(),
  channel: z.enum(['room', 'user']),
  roomId: z.optional(z.string()),
  ttl: z.number().check(z.int()),
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
 * is rebuilt from the connection record to take it out again, so it must never change form.
 */
export const roomListEntry = (connection: { connectionId: string; userId: string; ttl: number }) =>
  `${connection.connectionId} ${connection.userId} ${connection.ttl}`;

export interface RoomListEntry {
  readonly connectionId: string;
  readonly userId: string;
  readonly ttl: number;
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
    const [connectionId, userId, ttl] = entry.split(' ');
    if (!connectionId || !userId || !ttl || !/^\d+$/.test(ttl)) malformed(entry);
    else entries.push({ connectionId, userId, ttl: Number(ttl), entry });
  }
  return entries;
}

export const userConnectionKey = (projectId: string, userId: string, connectionId: string) => ({
  pk: userConnectionsPk(projectId, userId),
  sk: `${CONNECTION_SK_PREFIX}${connectionId}`,
});
export const connectionLookupKey = (connectionId: string) => ({ pk: `CONN#${connectionId}`, sk: 'CONN' });

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
export const userCounterKey = (projectId: string, userId: string) => ({ pk: userConnectionsPk(projectId, userId), sk: 'N#ALL' });

/** The room's last server event, replayed to `cache=1` subscribers. */
export const roomCachedEventKey = (projectId: string, roomId: string) => ({ pk: roomConnectionsPk(projectId, roomId), sk: 'CACHE' });
export const CACHED_EVENT_TTL_SECONDS = 30 * 60;

/** API Gateway closes connections after 2 h; the items outlive that a little, then TTL removes them. */
export const CONNECTION_TTL_SECONDS = 2 * 3600 + 600;
