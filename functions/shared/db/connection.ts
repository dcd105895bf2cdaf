import * as z from '#shared/schema';
import { roomPk, userPk } from './keys';

/**
 * A WebSocket connection. `channel: room` connections belong to one room, `channel: user`
 * connections are a user's private channel. Each is stored up to three times:
 *  - under its connection id (API Gateway's `$disconnect` carries nothing else): the full record;
 *  - under its room (`room` only), for fan-out: one Query per message;
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

/** The room and user list entries carry only what fan-out and listing need, to keep their reads cheap. */
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
export const roomConnectionKey = (projectId: string, roomId: string, connectionId: string) => ({
  pk: roomConnectionsPk(projectId, roomId),
  sk: `${CONNECTION_SK_PREFIX}${connectionId}`,
});
export const userConnectionKey = (projectId: string, userId: string, connectionId: string) => ({
  pk: userConnectionsPk(projectId, userId),
  sk: `${CONNECTION_SK_PREFIX}${connectionId}`,
});
export const connectionLookupKey = (connectionId: string) => ({ pk: `CONN#${connectionId}`, sk: 'CONN' });

/**
 * Presence counters, beside the lists they count (sort keys outside `C#`, so list Queries skip
 * them). Atomic `ADD`s decide the transitions (first connection of a user joins, last leaves;
 * first of a room occupies, last vacates) without the race a read-then-decide would have.
 */
export const roomCounterKey = (projectId: string, roomId: string) => ({ pk: roomConnectionsPk(projectId, roomId), sk: 'N#ROOM' });
export const ROOM_USER_COUNTER_SK_PREFIX = 'N#U#';
export const roomUserCounterKey = (projectId: string, roomId: string, userId: string) => ({
  pk: roomConnectionsPk(projectId, roomId),
  sk: `${ROOM_USER_COUNTER_SK_PREFIX}${userId}`,
});
export const userCounterKey = (projectId: string, userId: string) => ({ pk: userConnectionsPk(projectId, userId), sk: 'N#ALL' });

/** The room's last server event, replayed to `cache=1` subscribers. */
export const roomCachedEventKey = (projectId: string, roomId: string) => ({ pk: roomConnectionsPk(projectId, roomId), sk: 'CACHE' });
export const CACHED_EVENT_TTL_SECONDS = 30 * 60;

/** API Gateway closes connections after 2 h; the items outlive that a little, then TTL removes them. */
export const CONNECTION_TTL_SECONDS = 2 * 3600 + 600;
