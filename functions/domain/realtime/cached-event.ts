import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { CACHED_EVENT_TTL_SECONDS, roomCachedEventKey } from '#shared/db/connection';
import * as z from '#shared/schema';

/** The room's last server event (`POST /events`), replayed to `cache=1` subscribers for 30 minutes. */
const cachedEventItem = z.object({ frame: z.record(z.string(), z.unknown()), ttl: z.number() });

export async function cacheRoomEvent(projectId: string, roomId: string, frame: Record<string, unknown>): Promise<void> {
  const ttl = Math.floor(Date.now() / 1000) + CACHED_EVENT_TTL_SECONDS;
  await db.send(new PutCommand({ TableName: tableName, Item: { ...roomCachedEventKey(projectId, roomId), frame, ttl } }));
}

/** The cached frame, unless it expired (TTL sweeps lag, so expiry is checked here too). */
export async function cachedRoomEvent(projectId: string, roomId: string): Promise<Record<string, unknown> | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: roomCachedEventKey(projectId, roomId) }));
  const parsed = cachedEventItem.safeParse(Item);
  if (!parsed.success || parsed.data.ttl <= Date.now() / 1000) return undefined;
  return parsed.data.frame;
}
