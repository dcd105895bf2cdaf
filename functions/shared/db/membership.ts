import { BatchGetCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { getAll } from './batch';
import { db, tableName } from './client';
import { roomPk, userPk } from './keys';
import { type MemberRole, memberRole } from './member-role';
import { queryAll } from './query';
import { type RoomItem, roomIdsPage, roomIndexSk, roomItem, roomKey } from './room';
import type { TransactPart } from './transact';

export { MEMBERSHIP_ORIGINS, type MemberRole, type MembershipOrigin, memberRole } from './member-role';

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

/** The user's membership of the room, `undefined` for none; `consistent` reads the latest write. */
export async function findMembership(
  projectId: string,
  roomId: string,
  userId: string,
  options: { consistent?: boolean } = {},
): Promise<MembershipItem | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: membershipKey(projectId, roomId, userId), ConsistentRead: options.consistent ?? false }),
  );
  return Item ? membershipItem.parse(Item) : undefined;
}

/** The room and the user's membership of it with one BatchGet: what every access check needs. */
export async function findRoomAndMembership(
  projectId: string,
  roomId: string,
  userId: string,
): Promise<{ room?: RoomItem; membership?: MembershipItem }> {
  const roomKeys = roomKey(projectId, roomId);
  const memberKeys = membershipKey(projectId, roomId, userId);
  const { Responses } = await db.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: [roomKeys, memberKeys] } } }));
  const items = Responses?.[tableName] ?? [];
  const roomRaw = items.find((item) => item.sk === roomKeys.sk);
  const memberRaw = items.find((item) => item.sk === memberKeys.sk);
  return {
    ...(roomRaw ? { room: roomItem.parse(roomRaw) } : {}),
    ...(memberRaw ? { membership: membershipItem.parse(memberRaw) } : {}),
  };
}

/** Which of `userIds` are members of the room: one BatchGet per hundred ids. */
export async function membersAmong(projectId: string, roomId: string, userIds: readonly string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const found = await getAll(userIds.map((userId) => membershipKey(projectId, roomId, userId)));
  return new Set(found.map((raw) => membershipItem.parse(raw).userId));
}

/**
 * One page of a room's memberships by user id, after the `after` member; `more` when another page
 * follows (one more item is read than the page holds, so a last page says so instead of leading to
 * an empty one).
 */
export async function membershipsPage(
  projectId: string,
  roomId: string,
  page: { after?: string; limit: number; consistent?: boolean },
): Promise<{ memberships: MembershipItem[]; more: boolean }> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      // The `M#` range of the room's partition, which holds other items too: bounded on both ends.
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': roomPk(projectId, roomId),
        ':from': page.after === undefined ? MEMBER_SK_PREFIX : `${membershipKey(projectId, roomId, page.after).sk}\u0000`,
        ':to': `${MEMBER_SK_PREFIX}\uffff`,
      },
      ConsistentRead: page.consistent ?? false,
      Limit: page.limit + 1,
    }),
  );
  return { memberships: Items.slice(0, page.limit).map((raw) => membershipItem.parse(raw)), more: Items.length > page.limit };
}

/** One page of the rooms a user belongs to, through the membership index. */
export const userRoomIdsPage = (projectId: string, userId: string, page: { after?: string; limit: number }) =>
  roomIdsPage(userRoomsIndexKey(projectId, userId), page);

/** Every room the user belongs to, page after page. */
export async function allUserRoomIds(projectId: string, userId: string): Promise<string[]> {
  const memberships = await queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': userRoomsIndexKey(projectId, userId) },
    ProjectionExpression: 'roomId',
  });
  return memberships.map((item) => String(item.roomId));
}

/** Writes a membership whatever was there: for a room being created, which has none yet. */
export const membershipPutPart = (item: MembershipItem): TransactPart => ({ Put: { TableName: tableName, Item: item } });

/** Writes a membership the user does not hold yet; the transaction fails on an existing one. */
export const newMembershipPart = (item: MembershipItem): TransactPart => ({
  Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' },
});

/** Replaces a membership only while it still has the role just read (a role change that lost no race). */
export const membershipRoleChangePart = (item: MembershipItem, readRole: MemberRole): TransactPart => ({
  Put: {
    TableName: tableName,
    Item: item,
    ConditionExpression: '#role = :read',
    ExpressionAttributeNames: { '#role': 'role' },
    ExpressionAttributeValues: { ':read': readRole },
  },
});

/** Ends a membership; the transaction fails when there is none (nothing to announce). */
export const endMembershipPart = (projectId: string, roomId: string, userId: string): TransactPart => ({
  Delete: { TableName: tableName, Key: membershipKey(projectId, roomId, userId), ConditionExpression: 'attribute_exists(pk)' },
});

/** Holds the transaction to the user being a member of the room. */
export const isMemberCheck = (projectId: string, roomId: string, userId: string): TransactPart => ({
  ConditionCheck: { TableName: tableName, Key: membershipKey(projectId, roomId, userId), ConditionExpression: 'attribute_exists(pk)' },
});

/** Holds the transaction to the user not being a member of the room. */
export const isNotMemberCheck = (projectId: string, roomId: string, userId: string): TransactPart => ({
  ConditionCheck: { TableName: tableName, Key: membershipKey(projectId, roomId, userId), ConditionExpression: 'attribute_not_exists(pk)' },
});

/** Every membership of the user (their rooms and roles), page after page of the membership index. */
export async function membershipsOfUser(projectId: string, userId: string): Promise<MembershipItem[]> {
  const items = await queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': userRoomsIndexKey(projectId, userId) },
  });
  return items.map((raw) => membershipItem.parse(raw));
}
