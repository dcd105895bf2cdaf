import * as z from '#shared/schema';
import { roomPk } from './keys';

/**
 * A WebSocket connection, stored twice: under its room (for fan-out, one Query per message) and
 * under its connection id (API Gateway's `$disconnect` carries nothing else). The id-keyed item is
 * the one key not prefixed by a project: it only points back to the tenant-scoped one.
 */
export const connectionItem = z.object({
  pk: z.string(),
  sk: z.string(),
  projectId: z.string(),
  roomId: z.string(),
  userId: z.string(),
  /** The token's roles at connect time; frames on this connection act with them. */
  roles: z.array(z.string()),
  connectionId: z.string(),
  connectedAt: z.string(),
  ttl: z.number().check(z.int()),
});
export type ConnectionItem = z.infer<typeof connectionItem>;

export const CONNECTION_SK_PREFIX = 'C#';
export const roomConnectionsPk = (projectId: string, roomId: string) => `${roomPk(projectId, roomId)}#CONNS`;
export const roomConnectionKey = (projectId: string, roomId: string, connectionId: string) => ({
  pk: roomConnectionsPk(projectId, roomId),
  sk: `${CONNECTION_SK_PREFIX}${connectionId}`,
});
export const connectionLookupKey = (connectionId: string) => ({ pk: `CONN#${connectionId}`, sk: 'CONN' });

/** API Gateway closes connections after 2 h; the item outlives that a little, then TTL removes it. */
export const CONNECTION_TTL_SECONDS = 2 * 3600 + 600;
