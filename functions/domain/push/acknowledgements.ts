import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { pushRecordKey } from '#shared/db/push';
import { isConditionFailure } from '#shared/db/transact';
import { NotFoundError } from '#shared/errors';
import { countMetric } from '#shared/metrics';

/**
 * A client confirms it received a push. Only the push's own recipient may: anyone else's id, or
 * an unknown one, is not found. Acknowledging twice is harmless and counts once, so the
 * `push_delivered` ÷ `push_sent` rate on the dashboard stays a rate.
 */
export async function acknowledgePush(projectId: string, userId: string, pushId: string) {
  const deliveredAt = new Date().toISOString();
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
    const first = Attributes?.status !== 'delivered';
    if (first) countMetric('push_delivered');
    return {
      pushId,
      status: 'delivered' as const,
      deliveredAt: first ? deliveredAt : String(Attributes?.deliveredAt),
      channel: String(Attributes?.channel),
      roomId: String(Attributes?.roomId),
      messageId: Number(Attributes?.messageId),
    };
  } catch (error) {
    if (isConditionFailure(error)) throw new NotFoundError('push_not_found', 'Push not found');
    throw error;
  }
}
