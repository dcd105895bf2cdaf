import { createHash } from 'node:crypto';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ERASED_USER_ID } from '#shared/ids';
import * as z from '#shared/schema';
import { deletePartition, putAll } from './batch';
import { db, tableName } from './client';
import { userPk } from './keys';
import { queryAll } from './query';
import { isConditionFailure } from './transact';

export const FEED_ENTRY_KINDS = ['mention', 'reply', 'room_summary'] as const;
export type FeedEntryKind = (typeof FEED_ENTRY_KINDS)[number];

/**
 * A user's activity feed: one partition per user, written by the notification subscriber as things
 * happen (fan-out on write), so a page is one Query however many rooms the user is in. Entry ids
 * begin with the zero-padded time of the event and end with a hash of its source, so the same
 * event written twice lands on the same item.
 */
export const feedPk = (projectId: string, userId: string) => `${userPk(projectId, userId)}#FEED`;
const FEED_SK_PREFIX = 'F#';
export const feedEntryKey = (projectId: string, userId: string, entryId: string) => ({
  pk: feedPk(projectId, userId),
  sk: `${FEED_SK_PREFIX}${entryId}`,
});

export const feedEntryIdFor = (createdAt: string, sourceId: string) =>
  `${String(Date.parse(createdAt)).padStart(15, '0')}-${createHash('sha256').update(sourceId).digest('hex').slice(0, 16)}`;

export const feedEntryItem = z.object({
  projectId: z.string(),
  userId: z.string(),
  entryId: z.string(),
  kind: z.enum(FEED_ENTRY_KINDS),
  roomId: z.string(),
  /** Who did it: the author of the message, or absent for a room summary. */
  actorId: z.optional(z.string()),
  messageId: z.optional(z.number().check(z.int())),
  text: z.string(),
  createdAt: z.string(),
  ttl: z.number().check(z.int()),
});
export type FeedEntryItem = z.infer<typeof feedEntryItem>;

/** Writes entries (25 per BatchWriteItem); a repeat overwrites the same items. */
export async function putFeedEntries(entries: readonly FeedEntryItem[]): Promise<void> {
  await putAll(entries.map((entry) => ({ ...feedEntryKey(entry.projectId, entry.userId, entry.entryId), ...entry })));
}

/** One page of the user's feed, newest first, after the entry `after`: one Query. */
export async function feedPage(
  projectId: string,
  userId: string,
  page: { after?: string; limit: number },
): Promise<{ entries: FeedEntryItem[]; more: boolean }> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression:
        page.after === undefined ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk AND sk BETWEEN :prefix AND :before',
      ExpressionAttributeValues: {
        ':pk': feedPk(projectId, userId),
        ':prefix': FEED_SK_PREFIX,
        ...(page.after === undefined ? {} : { ':before': feedEntryKey(projectId, userId, page.after).sk }),
      },
      ScanIndexForward: false,
      Limit: page.limit + (page.after === undefined ? 1 : 2),
    }),
  );
  // BETWEEN includes its end: the cursor's own entry is not part of the next page.
  const entries = Items.map((raw) => feedEntryItem.parse(raw)).filter((entry) => entry.entryId !== page.after);
  return { entries: entries.slice(0, page.limit), more: entries.length > page.limit };
}

/** Every feed entry the project holds for the user (GDPR export). */
export async function feedEntriesOfUser(projectId: string, userId: string): Promise<FeedEntryItem[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': feedPk(projectId, userId) },
  });
  return items.map((raw) => feedEntryItem.parse(raw));
}

/** Deletes the user's whole feed (GDPR erasure; idempotent). */
export async function deleteFeedOfUser(projectId: string, userId: string): Promise<number> {
  return deletePartition(feedPk(projectId, userId));
}

/** Empties a feed entry an erased user's message made in another user's feed: no text, the actor `erased:user`. `false` when gone. */
export async function redactFeedEntry(projectId: string, userId: string, entryId: string): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: feedEntryKey(projectId, userId, entryId),
        UpdateExpression: 'SET #text = :empty, actorId = :erased',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#text': 'text' },
        ExpressionAttributeValues: { ':empty': '', ':erased': ERASED_USER_ID },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
