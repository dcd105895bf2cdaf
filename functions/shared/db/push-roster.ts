import * as z from '#shared/schema';
import { tableName } from './client';
import { roomPk } from './keys';
import { pushTarget } from './push';
import { queryAll } from './query';
import type { TransactPart } from './transact';

/**
 * A room's push roster: one item per member who has a target that may be sent to, holding copies
 * of those targets and the version of the user's targets they were made from. Sparse (members
 * without targets have none), so one Query of the partition finds every recipient of a message
 * whatever the room's size, without a read per member. docs/data-model.md ("Push") has the
 * access patterns.
 */

export const rosterPk = (projectId: string, roomId: string) => `${roomPk(projectId, roomId)}#PUSH`;
export const rosterKey = (projectId: string, roomId: string, userId: string) => ({ pk: rosterPk(projectId, roomId), sk: `U#${userId}` });
export const rosterItem = z.object({ userId: z.string(), targets: z.array(pushTarget), v: z.optional(z.number()) });
export type RosterItem = z.infer<typeof rosterItem>;

/** Every entry of a room's roster: one Query per 1 MB page, about a thousand members' targets each. */
export async function roomRoster(projectId: string, roomId: string): Promise<RosterItem[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': rosterPk(projectId, roomId) },
    ProjectionExpression: 'userId, targets',
  });
  return items.map((item) => rosterItem.parse(item));
}

/** Written only over a copy made from the same or an older version of the user's targets. */
const notNewer = (version: number) => ({
  ConditionExpression: 'attribute_not_exists(v) OR v <= :v',
  ExpressionAttributeValues: { ':v': version },
});

/** Puts the user's entry, unless a copy made from newer targets is there. */
export const rosterEntryPutPart = (
  projectId: string,
  roomId: string,
  userId: string,
  targets: readonly z.infer<typeof pushTarget>[],
  version: number,
): TransactPart => ({
  Put: { TableName: tableName, Item: { ...rosterKey(projectId, roomId, userId), userId, targets, v: version }, ...notNewer(version) },
});

/** Deletes the user's entry because their targets went: unless a copy made from newer targets is there. */
export const rosterEntryDeleteOlderPart = (projectId: string, roomId: string, userId: string, version: number): TransactPart => ({
  Delete: { TableName: tableName, Key: rosterKey(projectId, roomId, userId), ...notNewer(version) },
});

/** Deletes the user's entry whatever it holds: the caller makes it conditional on the membership being gone. */
export const rosterEntryDeletePart = (projectId: string, roomId: string, userId: string): TransactPart => ({
  Delete: { TableName: tableName, Key: rosterKey(projectId, roomId, userId) },
});
