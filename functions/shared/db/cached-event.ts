import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { roomConnectionsPk } from './connection';

/**
 * The room's last server event (`POST /events`), replayed to `cache=1` subscribers for 30 minutes.
 * It sits beside the room's connection list (a sort key outside `C#`, so list Queries skip it).
 */
export const cachedEventItem = z.object({ frame: z.record(z.string(), z.unknown()), ttl: z.number() });

export const roomCachedEventKey = (projectId: string, roomId: string) => ({ pk: roomConnectionsPk(projectId, roomId), sk: 'CACHE' });
export const CACHED_EVENT_TTL_SECONDS = 30 * 60;

export async function putCachedRoomEvent(projectId: string, roomId: string, frame: Record<string, unknown>): Promise<void> {
  const ttl = Math.floor(Date.now() / 1000) + CACHED_EVENT_TTL_SECONDS;
  await db.send(new PutCommand({ TableName: tableName, Item: { ...roomCachedEventKey(projectId, roomId), frame, ttl } }));
}

/** The cached frame, unless it expired (TTL sweeps lag, so expiry is checked here too). */
export async function findCachedRoomEvent(projectId: string, roomId: string): Promise<Record<string, unknown> | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: roomCachedEventKey(projectId, roomId) }));
  const parsed = cachedEventItem.safeParse(Item);
  if (!parsed.success || parsed.data.ttl <= Date.now() / 1000) return undefined;
  return parsed.data.frame;
}
