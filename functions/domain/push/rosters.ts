import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { membershipKey, userRoomsIndexKey } from '#shared/db/membership';
import {
  DEVICE_SK_PREFIX,
  type DeviceItem,
  deviceItem,
  type PushTarget,
  rosterKey,
  targetOf,
  userPushPk,
  WEB_PUSH_FAILURE_GATE,
  WEB_SK_PREFIX,
  type WebSubscriptionItem,
  webSubscriptionItem,
} from '#shared/db/push';
import { queryAll } from '#shared/db/query';
import { isConditionFailure } from '#shared/db/transact';

/**
 * The copies of a user's sendable targets in the push rosters of the user's rooms
 * (docs/data-model.md, "Push"). A target changes rarely and a message is sent often, so the cost
 * sits on the change: every change re-writes the user's roster entries, and a message finds all
 * its recipients in one Query (`functions/domain/push/dispatch.ts`).
 *
 * Every roster write is conditional twice over: on the membership (a copy is never written for a
 * member who has left, however late a sync runs) and on the version of the user's targets it was
 * made from (a sync that read older targets never overwrites a newer copy).
 */

export interface UserTargets {
  readonly items: readonly (DeviceItem | WebSubscriptionItem)[];
  readonly version: number;
}

/** One consistent Query of the user's partition: targets and their version together. */
export async function userTargets(projectId: string, userId: string): Promise<UserTargets> {
  const raw = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': userPushPk(projectId, userId) },
    ConsistentRead: true,
  });
  let version = 0;
  const items = raw.flatMap((item): (DeviceItem | WebSubscriptionItem)[] => {
    const sk = String(item.sk);
    if (sk.startsWith(DEVICE_SK_PREFIX)) return [deviceItem.parse(item)];
    if (sk.startsWith(WEB_SK_PREFIX)) return [webSubscriptionItem.parse(item)];
    if (sk === 'VERSION') version = Number(item.v ?? 0);
    return [];
  });
  return { items, version };
}

/** Every device, and the subscriptions the failure gate has not closed. */
const sendable = (targets: UserTargets): PushTarget[] =>
  targets.items.filter((item) => !('failure_count' in item) || item.failure_count < WEB_PUSH_FAILURE_GATE).map(targetOf);

async function roomsOf(projectId: string, userId: string): Promise<string[]> {
  const memberships = await queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': userRoomsIndexKey(projectId, userId) },
    ProjectionExpression: 'roomId',
  });
  return memberships.map((item) => String(item.roomId));
}

/** Rooms written at once: a user in many rooms must not open hundreds of requests together. */
const ROOM_WRITE_CONCURRENCY = 8;

/** Writes (or removes) the user's copy in one room; a refused condition means a newer copy or no membership. */
async function writeCopy(projectId: string, roomId: string, userId: string, targets: UserTargets): Promise<void> {
  const copy = sendable(targets);
  const key = rosterKey(projectId, roomId, userId);
  const newer = { ConditionExpression: 'attribute_not_exists(v) OR v <= :v', ExpressionAttributeValues: { ':v': targets.version } };
  try {
    await db.send(
      new TransactWriteCommand({
        TransactItems:
          copy.length > 0
            ? [
                {
                  ConditionCheck: {
                    TableName: tableName,
                    Key: membershipKey(projectId, roomId, userId),
                    ConditionExpression: 'attribute_exists(pk)',
                  },
                },
                { Put: { TableName: tableName, Item: { ...key, userId, targets: copy, v: targets.version }, ...newer } },
              ]
            : [{ Delete: { TableName: tableName, Key: key, ...newer } }],
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

async function writeCopies(projectId: string, roomIds: readonly string[], userId: string, targets: UserTargets): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < roomIds.length) await writeCopy(projectId, roomIds[next++] as string, userId, targets);
  };
  await Promise.all(Array.from({ length: Math.min(ROOM_WRITE_CONCURRENCY, roomIds.length) }, worker));
}

/** Re-writes the user's copy in every room they belong to from their current targets. Idempotent. */
export async function syncRosters(projectId: string, userId: string): Promise<void> {
  const [targets, rooms] = await Promise.all([userTargets(projectId, userId), roomsOf(projectId, userId)]);
  await writeCopies(projectId, rooms, userId, targets);
}

/** New members' copies: one consistent Query of each one's targets, one write for those who have any. */
export async function joinRosters(projectId: string, roomId: string, userIds: readonly string[]): Promise<void> {
  await Promise.all(
    userIds.map(async (userId) => {
      const targets = await userTargets(projectId, userId);
      if (sendable(targets).length > 0) await writeCopy(projectId, roomId, userId, targets);
    }),
  );
}

/** The roster copy's delete, for the transaction that ends the membership. */
export const leaveRosterDelete = (projectId: string, roomId: string, userId: string) => ({
  Delete: { TableName: tableName, Key: rosterKey(projectId, roomId, userId) },
});
