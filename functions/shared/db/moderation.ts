import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { putAll } from './batch';
import { db, tableName } from './client';
import { replaceActor, replaceActorOf } from './erased-actor';
import { projectPk } from './keys';
import { queryAll } from './query';

/** The project's block list: case-insensitive substrings. */
export const blockListItem = z.object({
  pk: z.string(),
  sk: z.literal('BLOCKLIST'),
  terms: z.array(z.string()),
  updatedAt: z.string(),
  updatedBy: z.string(),
});
export type BlockListItem = z.infer<typeof blockListItem>;
export const blockListKey = (projectId: string) => ({ pk: projectPk(projectId), sk: 'BLOCKLIST' as const });

/** One record per automatically flagged message; newest first by sort key. */
export const moderationRecordItem = z.object({
  pk: z.string(),
  sk: z.string(),
  projectId: z.string(),
  roomId: z.string(),
  messageId: z.number().check(z.int()),
  userId: z.string(),
  label: z.literal('auto_flag'),
  reason: z.string(),
  matchedTerm: z.string(),
  createdAt: z.string(),
});
export type ModerationRecordItem = z.infer<typeof moderationRecordItem>;
export const moderationRecordsPk = (projectId: string) => `${projectPk(projectId)}#MODERATION`;

/** The project's automation log: what automatic rules did and why, sorted like the moderation records. */
export const automationEventItem = z.object({
  pk: z.string(),
  sk: z.string(),
  rule: z.literal('block_list'),
  action: z.literal('label_message'),
  label: z.literal('auto_flag'),
  roomId: z.string(),
  messageId: z.number().check(z.int()),
  reason: z.string(),
  createdAt: z.string(),
});
export type AutomationEventItem = z.infer<typeof automationEventItem>;
export const automationEventsPk = (projectId: string) => `${projectPk(projectId)}#AUTOMATION`;

export async function findBlockList(projectId: string): Promise<BlockListItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: blockListKey(projectId) }));
  return Item ? blockListItem.parse(Item) : undefined;
}

export async function putBlockList(item: BlockListItem): Promise<void> {
  await db.send(new PutCommand({ TableName: tableName, Item: item }));
}

export type AutoFlag = Omit<ModerationRecordItem, 'pk' | 'sk' | 'label' | 'createdAt'>;

/**
 * Writes the moderation record and the automation event of one flagged message in one request,
 * keyed by when the flag was raised so the newest flags list first (even on backdated imports).
 */
export async function putAutoFlag(flag: AutoFlag, createdAt: string): Promise<void> {
  const sortKey = `${createdAt}#${flag.roomId}#${flag.messageId}`;
  const record: ModerationRecordItem = { pk: moderationRecordsPk(flag.projectId), sk: sortKey, label: 'auto_flag', createdAt, ...flag };
  const automationEvent: AutomationEventItem = {
    pk: automationEventsPk(flag.projectId),
    sk: sortKey,
    rule: 'block_list',
    action: 'label_message',
    label: 'auto_flag',
    roomId: flag.roomId,
    messageId: flag.messageId,
    reason: flag.reason,
    createdAt,
  };
  await putAll([record, automationEvent]);
}

/** The project's newest `limit` moderation records, newest first. */
export async function newestModerationRecords(projectId: string, limit: number): Promise<ModerationRecordItem[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': moderationRecordsPk(projectId) },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return Items.map((raw) => moderationRecordItem.parse(raw));
}

export function toModerationRecord(item: ModerationRecordItem) {
  return {
    roomId: item.roomId,
    messageId: item.messageId,
    userId: item.userId,
    label: item.label,
    reason: item.reason,
    matchedTerm: item.matchedTerm,
    createdAt: item.createdAt,
  };
}

/**
 * The moderation records of a user's messages: one partition per project, read whole and filtered
 * on the author, so the cost grows with the project's flags. Used by GDPR export and erasure only.
 */
export async function moderationRecordsOfUser(projectId: string, userId: string): Promise<ModerationRecordItem[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    FilterExpression: 'userId = :user',
    ExpressionAttributeValues: { ':pk': moderationRecordsPk(projectId), ':user': userId },
  });
  return items.map((raw) => moderationRecordItem.parse(raw));
}

/** The record keeps the flag (message, label, reason); its author becomes the erased user. */
export const forgetModerationRecordAuthor = (item: ModerationRecordItem, userId: string) => replaceActor(item, item, ['userId'], userId);

/** The block list's last editor, where it is `userId`, becomes the erased user. */
export const forgetBlockListEditor = (projectId: string, userId: string) => replaceActorOf(blockListKey(projectId), ['updatedBy'], userId);
