import { createHash } from 'node:crypto';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { deletePartition } from './batch';
import { db, tableName } from './client';
import { userPk } from './keys';
import { NOTIFICATION_KINDS } from './notification-kinds';
import { queryAll } from './query';
import { isConditionFailure, type TransactPart, transactWrite } from './transact';

export { NOTIFICATION_KINDS, type NotificationKind } from './notification-kinds';

/**
 * A user's inbox is one partition holding three kinds of item:
 *  - `N#<id>`: a notification; ids begin with the zero-padded creation time, so the partition read
 *    backwards is the inbox newest first. While unread it is also in the sparse `gsi1` list
 *    `…#NTF#UNREAD` (the attribute is removed when read), so `unread=true` reads no read ones.
 *  - `SRC#<hash of sourceId>`: the marker that makes creation idempotent per (user, source),
 *    whatever `createdAt` a second attempt computes;
 *  - `COUNT`: the unread counter, changed in the same transaction as each notification, so the
 *    list answers the count with one GetItem instead of counting.
 */
export const notificationsPk = (projectId: string, userId: string) => `${userPk(projectId, userId)}#NTF`;
export const unreadIndexKey = (projectId: string, userId: string) => `${userPk(projectId, userId)}#NTF#UNREAD`;
const NOTIFICATION_SK_PREFIX = 'N#';
const SOURCE_SK_PREFIX = 'SRC#';
const COUNTER_SK = 'COUNT';

export const notificationKey = (projectId: string, userId: string, notificationId: string) => ({
  pk: notificationsPk(projectId, userId),
  sk: `${NOTIFICATION_SK_PREFIX}${notificationId}`,
});
const sourceMarkerKey = (projectId: string, userId: string, sourceId: string) => ({
  pk: notificationsPk(projectId, userId),
  sk: `${SOURCE_SK_PREFIX}${sourceHash(sourceId)}`,
});
const counterKey = (projectId: string, userId: string) => ({ pk: notificationsPk(projectId, userId), sk: COUNTER_SK });

const sourceHash = (sourceId: string) => createHash('sha256').update(sourceId).digest('hex').slice(0, 16);

/**
 * `<creation time in ms, 15 digits>-<16 hex of the source>`: sorts by time, is the same for the
 * same (createdAt, sourceId), and passes the path id pattern.
 */
export const notificationIdFor = (createdAt: string, sourceId: string) =>
  `${String(Date.parse(createdAt)).padStart(15, '0')}-${sourceHash(sourceId)}`;

export const notificationItem = z.object({
  projectId: z.string(),
  userId: z.string(),
  notificationId: z.string(),
  kind: z.enum(NOTIFICATION_KINDS),
  sourceId: z.string(),
  title: z.string(),
  body: z.string(),
  roomId: z.optional(z.string()),
  messageId: z.optional(z.number().check(z.int())),
  data: z.optional(z.record(z.string(), z.unknown())),
  createdAt: z.string(),
  readAt: z.nullable(z.string()),
  ttl: z.number().check(z.int()),
});
export type NotificationItem = z.infer<typeof notificationItem>;

const parseNotification = (raw: Record<string, unknown>) => notificationItem.parse(raw);

/**
 * The parts that create a notification once: the source marker (whose condition fails when the
 * user already has a notification from this source), the notification listed as unread, and the
 * counter's increment. With the caller's other parts (an outbox event) they make one
 * TransactWriteItems request; a failed condition means it existed.
 */
export function createNotificationParts(item: NotificationItem): TransactPart[] {
  const { projectId, userId } = item;
  return [
    {
      Put: {
        TableName: tableName,
        Item: { ...sourceMarkerKey(projectId, userId, item.sourceId), notificationId: item.notificationId, ttl: item.ttl },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: tableName,
        Item: {
          ...notificationKey(projectId, userId, item.notificationId),
          ...item,
          gsi1pk: unreadIndexKey(projectId, userId),
          gsi1sk: item.notificationId,
        },
      },
    },
    {
      Update: {
        TableName: tableName,
        Key: counterKey(projectId, userId),
        UpdateExpression: 'ADD unread :one',
        ExpressionAttributeValues: { ':one': 1 },
      },
    },
  ];
}

/** The user's unread count (0 before any notification); one GetItem. */
export async function unreadCount(projectId: string, userId: string): Promise<number> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: counterKey(projectId, userId), ConsistentRead: true }));
  return Math.max(0, Number(Item?.unread ?? 0));
}

/**
 * One page of the user's notifications, newest first, after the notification `after` (a cursor is
 * the last id of the previous page); `unreadOnly` reads the unread list instead. One Query.
 */
export async function notificationsPage(
  projectId: string,
  userId: string,
  page: { after?: string; limit: number; unreadOnly: boolean },
): Promise<{ notifications: NotificationItem[]; more: boolean }> {
  const input = page.unreadOnly
    ? {
        IndexName: 'gsi1',
        KeyConditionExpression: page.after === undefined ? 'gsi1pk = :pk' : 'gsi1pk = :pk AND gsi1sk < :after',
        ExpressionAttributeValues: {
          ':pk': unreadIndexKey(projectId, userId),
          ...(page.after === undefined ? {} : { ':after': page.after }),
        },
      }
    : {
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: {
          ':pk': notificationsPk(projectId, userId),
          ':from': NOTIFICATION_SK_PREFIX,
          ':to': page.after === undefined ? `${NOTIFICATION_SK_PREFIX}\uffff` : notificationKey(projectId, userId, page.after).sk,
        },
      };
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      ...input,
      ScanIndexForward: false,
      Limit: page.limit + (page.after === undefined || page.unreadOnly ? 1 : 2),
    }),
  );
  // BETWEEN includes its end: the cursor's own notification is not part of the next page.
  const items = Items.map(parseNotification).filter((item) => item.notificationId !== page.after);
  return { notifications: items.slice(0, page.limit), more: items.length > page.limit };
}

/** One notification of the user; `undefined` when it is not theirs or not there (expired). */
export async function findNotification(projectId: string, userId: string, notificationId: string): Promise<NotificationItem | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: notificationKey(projectId, userId, notificationId), ConsistentRead: true }),
  );
  return Item ? parseNotification(Item) : undefined;
}

const markReadPart = (projectId: string, userId: string, notificationId: string, readAt: string): TransactPart => ({
  Update: {
    TableName: tableName,
    Key: notificationKey(projectId, userId, notificationId),
    UpdateExpression: 'SET readAt = :readAt REMOVE gsi1pk, gsi1sk',
    ConditionExpression: 'attribute_exists(pk) AND attribute_type(readAt, :null)',
    ExpressionAttributeValues: { ':readAt': readAt, ':null': 'NULL' },
  },
});

const decrementPart = (projectId: string, userId: string, by: number): TransactPart => ({
  Update: {
    TableName: tableName,
    Key: counterKey(projectId, userId),
    UpdateExpression: 'ADD unread :minus',
    ExpressionAttributeValues: { ':minus': -by },
  },
});

/**
 * Marks one notification read and takes it off the counter, in one transaction: `false` when it
 * was read already or is not there (the caller tells which).
 */
export async function markNotificationRead(projectId: string, userId: string, notificationId: string, readAt: string): Promise<boolean> {
  try {
    await transactWrite([markReadPart(projectId, userId, notificationId, readAt), decrementPart(projectId, userId, 1)]);
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Up to `limit` ids of the user's unread notifications, newest first (one Query of the unread list). */
export async function unreadNotificationIds(projectId: string, userId: string, limit: number): Promise<string[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': unreadIndexKey(projectId, userId) },
      ProjectionExpression: 'notificationId',
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return Items.map((item) => String(item.notificationId));
}

/**
 * Marks these unread notifications read and takes them off the counter in one transaction (at most
 * 99 ids): `false` when one of them was read meanwhile, and nothing was written.
 */
export async function markNotificationsRead(projectId: string, userId: string, notificationIds: readonly string[], readAt: string) {
  try {
    await transactWrite([
      ...notificationIds.map((id) => markReadPart(projectId, userId, id, readAt)),
      decrementPart(projectId, userId, notificationIds.length),
    ]);
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * Sets the counter to 0 if it still holds `seen`: after a read-all found nothing unread, a count
 * left over by notifications that expired unread is cleared, and a notification created meanwhile
 * (which changed the counter) is not lost.
 */
export async function resetUnreadCount(projectId: string, userId: string, seen: number): Promise<void> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: counterKey(projectId, userId),
        UpdateExpression: 'SET unread = :zero',
        ConditionExpression: 'unread = :seen',
        ExpressionAttributeValues: { ':zero': 0, ':seen': seen },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** Every notification the project holds for the user, oldest first (GDPR export). */
export async function notificationsOfUser(projectId: string, userId: string): Promise<NotificationItem[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': notificationsPk(projectId, userId), ':prefix': NOTIFICATION_SK_PREFIX },
  });
  return items.map(parseNotification);
}

/** Deletes the user's whole inbox: notifications, source markers and the counter (GDPR erasure; idempotent). */
export async function deleteNotificationsOfUser(projectId: string, userId: string): Promise<number> {
  return deletePartition(notificationsPk(projectId, userId));
}

/**
 * Empties a notification another user's message caused, once that author is erased: title and
 * body copied the author's id and words. It stays (read state and unread count unchanged) with
 * a title saying so. `false` when it is gone (expired, or its owner erased it).
 */
export async function redactNotification(projectId: string, userId: string, notificationId: string): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: notificationKey(projectId, userId, notificationId),
        UpdateExpression: 'SET title = :title, body = :empty REMOVE #data',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#data': 'data' },
        ExpressionAttributeValues: { ':title': 'A message of an erased user', ':empty': '' },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
