import { randomBytes } from 'node:crypto';
import {
  BatchWriteCommand,
  type DynamoDBDocumentClient,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { feedEntryIdFor, feedEntryKey } from '../../functions/shared/db/activity-feed';
import { createNotificationParts, type NotificationItem, notificationIdFor } from '../../functions/shared/db/notification';
import { raw, table } from './raw-table';

/**
 * A notification in a user's inbox, written with the entity's own transaction parts (notification,
 * source marker, unread counter) on the test's client: for suites about who may read an inbox,
 * not about what creates notifications (test/e2e/notifications.test.ts).
 */
export async function seedNotification(
  projectId: string,
  userId: string,
  options: { createdAt?: string; client?: DynamoDBDocumentClient; tableName?: string } = {},
): Promise<string> {
  const createdAt = options.createdAt ?? new Date().toISOString();
  const tableName = options.tableName ?? table();
  const sourceId = `seed-${randomBytes(6).toString('hex')}`;
  const item: NotificationItem = {
    projectId,
    userId,
    notificationId: notificationIdFor(createdAt, sourceId),
    kind: 'mention',
    sourceId,
    title: 'seeded',
    body: 'seeded notification',
    createdAt,
    readAt: null,
    ttl: Math.floor(Date.now() / 1000) + 3600,
  };
  // The entity's parts name the table of a function's bindings, which a test has not.
  const parts = createNotificationParts(item).map((part) =>
    Object.fromEntries(Object.entries(part).map(([kind, body]) => [kind, { ...body, TableName: tableName }])),
  ) as TransactWriteCommandInput['TransactItems'];
  await (options.client ?? raw).send(new TransactWriteCommand({ TransactItems: parts }));
  return item.notificationId;
}

/** `count` room summary entries in a user's feed, one per room `<prefix>-<i>`, newest last, in batch writes. */
export async function seedFeedEntries(projectId: string, userId: string, count: number, roomPrefix = 'room'): Promise<void> {
  const start = Date.now() - count * 1000;
  const items = Array.from({ length: count }, (_, index) => {
    const createdAt = new Date(start + index * 1000).toISOString();
    const entryId = feedEntryIdFor(createdAt, `seed-${index}-${randomBytes(4).toString('hex')}`);
    return {
      ...feedEntryKey(projectId, userId, entryId),
      projectId,
      userId,
      entryId,
      kind: 'room_summary',
      roomId: `${roomPrefix}-${index}`,
      text: `summary ${index}`,
      createdAt,
      ttl: Math.floor(Date.now() / 1000) + 3600,
    };
  });
  for (let i = 0; i < items.length; i += 25) {
    await raw.send(
      new BatchWriteCommand({ RequestItems: { [table()]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }),
    );
  }
}
