import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { projectPk, roomPk } from './keys';

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
