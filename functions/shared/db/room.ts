import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { getAll } from './batch';
import { db, tableName } from './client';
import { replaceActor } from './erased-actor';
import { projectPk, roomPk } from './keys';
import { putIfAbsent } from './put-if-absent';
import { isConditionFailure } from './transact';

export const roomType = z.enum(['public', 'group', 'dm']);
export type RoomType = z.infer<typeof roomType>;

export const roomItem = z.object({
  pk: z.string(),
  sk: z.literal('ROOM'),
  /** Set on public rooms only: the project's public room directory. */
  gsi1pk: z.optional(z.string()),
  gsi1sk: z.optional(z.string()),
  projectId: z.string(),
  roomId: z.string(),
  type: roomType,
  name: z.optional(z.string()),
  description: z.optional(z.string()),
  e2eEnabled: z.boolean(),
  /** 256-bit base64 key; only ever returned by the e2e-key route. */
  e2eKey: z.string(),
  /** Members (not only moderators) may pin messages with the `/pin` slash command; off unless set. */
  allowMemberPins: z.optional(z.boolean()),
  /** Bridges linking the room to Slack, Discord or Matrix channels (`./bridge`); absent: none. */
  bridgeCount: z.optional(z.number().check(z.int())),
  /**
   * Set (never cleared, one conditional UpdateItem) before the room's push roster gets its first entry,
   * and before someone first watches the room: copied onto each message so the publisher wakes the push
   * and watcher subscribers only for rooms that may need them (`./push-roster`, `./watchlist`).
   */
  pushTargets: z.optional(z.literal(true)),
  watched: z.optional(z.literal(true)),
  /**
   * Set on rooms created since those two flags exist, whose flags are therefore complete. An older
   * room lacks it and is taken to have push targets and watchers, so an upgrade needs no backfill:
   * its messages wake those subscribers as they always did.
   */
  wakeFlagsKept: z.optional(z.literal(true)),
  /**
   * Epoch ms until which the room is coalesced (hot): its messages are delivered by the `RoomDelivery`
   * stream consumer in batches instead of by the sender. Set by the event publisher's room heat.
   */
  coalesceUntil: z.optional(z.number()),
  createdBy: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type RoomItem = z.infer<typeof roomItem>;

export const roomKey = (projectId: string, roomId: string) => ({ pk: roomPk(projectId, roomId), sk: 'ROOM' as const });

export const publicRoomsIndexKey = (projectId: string) => `${projectPk(projectId)}#PUBLIC_ROOMS`;
export const roomIndexSk = (roomId: string) => `R#${roomId}`;

/** The public shape of a room: everything but keys and the e2e key. */
export function toRoom(item: RoomItem) {
  return {
    id: item.roomId,
    type: item.type,
    name: item.name ?? null,
    description: item.description ?? null,
    e2eEnabled: item.e2eEnabled,
    allowMemberPins: item.allowMemberPins ?? false,
    createdBy: item.createdBy,
    createdAt: item.createdAt,
    updatedAt: item.updatedAt,
  };
}
export type Room = ReturnType<typeof toRoom>;

/** The room item, `undefined` when the project has no such room (an eventually consistent read). */
export async function findRoom(projectId: string, roomId: string): Promise<RoomItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: roomKey(projectId, roomId) }));
  return Item ? roomItem.parse(Item) : undefined;
}

/** Rooms by id, in no particular order; ids without a room are left out. */
export async function findRooms(projectId: string, roomIds: readonly string[]): Promise<RoomItem[]> {
  return (await getAll(roomIds.map((roomId) => roomKey(projectId, roomId)))).map((raw) => roomItem.parse(raw));
}

/** Writes a new room; `false` when the id is taken. */
export const putNewRoom = (item: RoomItem): Promise<boolean> => putIfAbsent(item);

/** The fields a room's owner may change; `null` removes one. */
export interface RoomPatch {
  readonly name?: string | null;
  readonly description?: string | null;
  readonly e2eEnabled?: boolean;
  readonly allowMemberPins?: boolean;
}

/** Applies `patch` and moves `updatedAt` on; `undefined` when there is no such room. */
export async function updateRoomFields(projectId: string, roomId: string, patch: RoomPatch, now: string): Promise<RoomItem | undefined> {
  const sets = ['updatedAt = :now'];
  const removes: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':now': now };
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    names[`#${field}`] = field;
    if (value === null) removes.push(`#${field}`);
    else {
      sets.push(`#${field} = :${field}`);
      values[`:${field}`] = value;
    }
  }
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: roomKey(projectId, roomId),
        UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
        ConditionExpression: 'attribute_exists(pk)',
        ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return roomItem.parse(Attributes);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** One page of room ids under a gsi1 room list (`R#<roomId>` sort keys), after the `after` room; `more` when another page follows. */
export async function roomIdsPage(
  indexKey: string,
  page: { after?: string; limit: number },
): Promise<{ roomIds: string[]; more: boolean }> {
  const { Items = [], LastEvaluatedKey } = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: page.after === undefined ? 'gsi1pk = :pk' : 'gsi1pk = :pk AND gsi1sk > :after',
      ExpressionAttributeValues: { ':pk': indexKey, ...(page.after === undefined ? {} : { ':after': roomIndexSk(page.after) }) },
      Limit: page.limit,
    }),
  );
  return { roomIds: Items.map((item) => String(item.roomId)), more: LastEvaluatedKey !== undefined };
}

/** One page of the project's public room directory. */
export const publicRoomIdsPage = (projectId: string, page: { after?: string; limit: number }) =>
  roomIdsPage(publicRoomsIndexKey(projectId), page);

/** The room's creator, where it is `userId`, becomes the erased user. */
export const forgetRoomCreator = (item: RoomItem, userId: string) =>
  replaceActor(roomKey(item.projectId, item.roomId), item, ['createdBy'], userId);

/** The room flags that wake a subscriber (`pushTargets`, `watched`): set once, never cleared. */
export type RoomWakeFlag = 'pushTargets' | 'watched';

/**
 * Sets a wake flag on the room item, unless it is set or the room is gone: one conditional
 * UpdateItem (a plain write, not a transaction part, so members syncing at once never cancel each
 * other's transactions on the room item).
 */
export async function setRoomWakeFlag(projectId: string, roomId: string, flag: RoomWakeFlag): Promise<void> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: roomKey(projectId, roomId),
        UpdateExpression: 'SET #flag = :set',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#flag)',
        ExpressionAttributeNames: { '#flag': flag },
        ExpressionAttributeValues: { ':set': true },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/**
 * Keeps the room coalesced until `untilMs` (epoch ms). Never shortens a later hold another writer
 * set, and never creates a room that is gone: both are a condition failure, answered `false`.
 */
export async function setRoomCoalesceUntil(projectId: string, roomId: string, untilMs: number): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: roomKey(projectId, roomId),
        UpdateExpression: 'SET coalesceUntil = :until',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(coalesceUntil) OR coalesceUntil < :until)',
        ExpressionAttributeValues: { ':until': untilMs },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
