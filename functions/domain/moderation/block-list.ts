import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import { putAll } from '#shared/db/batch';
import { db, tableName } from '#shared/db/client';
import {
  automationEventsPk,
  type BlockListItem,
  blockListItem,
  blockListKey,
  type ModerationRecordItem,
  moderationRecordItem,
  moderationRecordsPk,
  toModerationRecord,
} from '#shared/db/moderation';

export const MAX_BLOCK_LIST_TERMS = 1000;
export const MAX_TERM_LENGTH = 200;

const cache = new TtlCache<readonly string[]>(config.CACHE_TTL_MS);

export async function getBlockList(projectId: string): Promise<{ terms: string[]; updatedAt: string | null }> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: blockListKey(projectId) }));
  const item = Item ? blockListItem.parse(Item) : undefined;
  return { terms: item?.terms ?? [], updatedAt: item?.updatedAt ?? null };
}

/** Replaces the list; terms are trimmed, lower-cased and de-duplicated so matching stays one pass. */
export async function replaceBlockList(projectId: string, terms: readonly string[], updatedBy: string) {
  const normalized = [...new Set(terms.map((term) => term.trim().toLowerCase()).filter(Boolean))];
  const item: BlockListItem = { ...blockListKey(projectId), terms: normalized, updatedAt: new Date().toISOString(), updatedBy };
  await db.send(new PutCommand({ TableName: tableName, Item: item }));
  cache.delete(projectId);
  return { terms: normalized, updatedAt: item.updatedAt };
}

/** The first block-list term the content contains, case-insensitively. */
export async function findBlockedTerm(projectId: string, content: string): Promise<string | undefined> {
  let terms = cache.get(projectId);
  if (!terms) {
    terms = (await getBlockList(projectId)).terms;
    cache.set(projectId, terms);
  }
  if (terms.length === 0) return undefined;
  const haystack = content.toLowerCase();
  return terms.find((term) => haystack.includes(term));
}

/**
 * Writes the moderation record and the automation event of one flagged message in one request,
 * keyed by when the flag was raised so the newest flags list first (even on backdated imports).
 */
export async function recordAutoFlag(flag: Omit<ModerationRecordItem, 'pk' | 'sk' | 'label' | 'createdAt'>): Promise<void> {
  const createdAt = new Date().toISOString();
  const sortKey = `${createdAt}#${flag.roomId}#${flag.messageId}`;
  const record: ModerationRecordItem = { pk: moderationRecordsPk(flag.projectId), sk: sortKey, label: 'auto_flag', createdAt, ...flag };
  const automationEvent = {
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

export async function listAutoFlags(projectId: string, limit: number) {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': moderationRecordsPk(projectId) },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return Items.map((raw) => toModerationRecord(moderationRecordItem.parse(raw)));
}
