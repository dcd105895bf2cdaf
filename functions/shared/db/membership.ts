import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { roomPk, userPk } from './keys';
import { roomIndexSk } from './room';

/** Room-level role: `owner` created the room; `guest` may read and post but not fetch the e2e key. */
export const memberRole = z.enum(['owner', 'member', 'guest']);
export type MemberRole = z.infer<typeof memberRole>;

/** Stored in the room's partition; gsi1 inverts it into the user's room list. */
export const membershipItem = z.object({
  pk: z.string(),
  sk: z.string(),
  gsi1pk: z.string(),
  gsi1sk: z.string(),
  projectId: z.string(),
  roomId: z.string(),
  userId: z.string(),
  role: memberRole,
  joinedAt: z.string(),
});
export type MembershipItem = z.infer<typeof membershipItem>;

export const MEMBER_SK_PREFIX = 'M#';

export const membershipKey = (projectId: string, roomId: string, userId: string) => ({
  pk: roomPk(projectId, roomId),
  sk: `${MEMBER_SK_PREFIX}${userId}`,
});

export function membershipItemFor(projectId: string, roomId: string, userId: string, role: MemberRole, joinedAt: string): MembershipItem {
  return {
    ...membershipKey(projectId, roomId, userId),
    gsi1pk: userRoomsIndexKey(projectId, userId),
    gsi1sk: roomIndexSk(roomId),
    projectId,
    roomId,
    userId,
    role,
    joinedAt,
  };
}

export const userRoomsIndexKey = (projectId: string, userId: string) => `${userPk(projectId, userId)}#ROOMS`;

export function toMember(item: MembershipItem) {
  return { userId: item.userId, role: item.role, joinedAt: item.joinedAt };
}

/** The user's membership of the room (a consistent read), `undefined` when it is not a member. */
export async function findMembership(projectId: string, roomId: string, userId: string): Promise<MembershipItem | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: membershipKey(projectId, roomId, userId), ConsistentRead: true }),
  );
  return Item ? membershipItem.parse(Item) : undefined;
}
