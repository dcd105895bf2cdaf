import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import { projectPk } from './keys';

/**
 * The monthly AI call counter, spread over shards so a busy project does not write one hot item:
 * each call adds to a random shard; the month's total is one Query of the partition. A new month is
 * a new partition, so nothing has to be reset; TTL sweeps old months.
 */
export const QUOTA_SHARDS = 10;
export const quotaMonthPk = (projectId: string, month: string) => `${projectPk(projectId)}#AIQ#${month}`;
export const quotaShardKey = (projectId: string, month: string, shard: number) => ({
  pk: quotaMonthPk(projectId, month),
  sk: `S#${shard}`,
});
/** `2026-11`: calendar months in UTC. */
export const monthOf = (date: Date) => date.toISOString().slice(0, 7);

/** Shards outlive their month by a little, then TTL removes them. */
const QUOTA_RETENTION_SECONDS = 70 * 86_400;

/** The AI calls counted in `month`: the sum over its shards (an eventually consistent Query). */
export async function invocationsInMonth(projectId: string, month: string): Promise<number> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': quotaMonthPk(projectId, month) },
      ProjectionExpression: 'invocations',
    }),
  );
  return Items.reduce((total, item) => total + (typeof item.invocations === 'number' ? item.invocations : 0), 0);
}

/** Counts one AI call in `month`, on a random shard. */
export async function addInvocation(projectId: string, month: string): Promise<void> {
  const shard = Math.floor(Math.random() * QUOTA_SHARDS);
  await db.send(
    new UpdateCommand({
      TableName: tableName,
      Key: quotaShardKey(projectId, month, shard),
      UpdateExpression: 'ADD invocations :one SET #ttl = if_not_exists(#ttl, :ttl)',
      ExpressionAttributeNames: { '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':one': 1, ':ttl': Math.floor(Date.now() / 1000) + QUOTA_RETENTION_SECONDS },
    }),
  );
}
