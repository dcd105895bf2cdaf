import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { putAll } from './batch';
import { db, tableName } from './client';
import { projectPk } from './keys';
import { isConditionFailure } from './transact';

/**
 * One notification sent to one target, for the client's delivery acknowledgement. Kept a month
 * (TTL); pk alone addresses it, so an acknowledgement is one conditional write.
 */
export const pushRecordKey = (projectId: string, pushId: string) => ({
  pk: `${projectPk(projectId)}#PUSHREC#${pushId}`,
  sk: 'PUSH' as const,
});
export const PUSH_RECORD_TTL_SECONDS = 30 * 86_400;
export const PUSH_ID_PATTERN = /^push_[A-Za-z0-9]{16,40}$/;

export const pushChannel = z.enum(['web', 'fcm', 'apns']);

export const pushRecordItem = z.object({
  pk: z.string(),
  sk: z.literal('PUSH'),
  pushId: z.string(),
  userId: z.string(),
  channel: pushChannel,
  targetId: z.string(),
  roomId: z.string(),
  messageId: z.number(),
  status: z.enum(['sent', 'failed', 'delivered']),
  sentAt: z.string(),
  deliveredAt: z.optional(z.string()),
  ttl: z.number().check(z.int()),
});
export type PushRecordItem = z.infer<typeof pushRecordItem>;

export function pushRecordItemFor(
  projectId: string,
  push: Omit<PushRecordItem, 'pk' | 'sk' | 'ttl' | 'deliveredAt' | 'status'> & { readonly status: 'sent' | 'failed' },
): PushRecordItem {
  return { ...pushRecordKey(projectId, push.pushId), ...push, ttl: Math.floor(Date.parse(push.sentAt) / 1000) + PUSH_RECORD_TTL_SECONDS };
}

/** A batch's records, 25 per request. */
export const putPushRecords = (records: readonly PushRecordItem[]) => putAll(records);

/**
 * Marks a push delivered, only for its recipient; `deliveredAt` is kept from the first time. The
 * record as it was before, or `undefined` when there is none for this user (unknown, someone
 * else's, or expired).
 */
export async function acknowledgePushRecord(
  projectId: string,
  userId: string,
  pushId: string,
  deliveredAt: string,
): Promise<PushRecordItem | undefined> {
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: pushRecordKey(projectId, pushId),
        UpdateExpression: 'SET #status = :delivered, deliveredAt = if_not_exists(deliveredAt, :now)',
        ConditionExpression: 'attribute_exists(pk) AND userId = :me',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':delivered': 'delivered', ':now': deliveredAt, ':me': userId },
        ReturnValues: 'ALL_OLD',
      }),
    );
    return pushRecordItem.parse(Attributes);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}
