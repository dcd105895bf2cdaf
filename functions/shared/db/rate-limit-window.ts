import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { deleteAll } from './batch';
import { db, tableName } from './client';
import { projectPk } from './keys';
import { queryAll } from './query';

/**
 * One fixed window of a rate limit: a counter per (bucket, key, window number), gone by TTL once
 * the window is over.
 */
export const rateLimitWindowItem = z.object({
  pk: z.string(),
  sk: z.string(),
  count: z.number().check(z.int()),
  /** Epoch seconds: a minute past the window's end. */
  ttl: z.number().check(z.int()),
});
export type RateLimitWindowItem = z.infer<typeof rateLimitWindowItem>;

export const rateLimitWindowKey = (projectId: string, bucket: string, key: string, window: number) => ({
  pk: `${projectPk(projectId)}#RL#${bucket}#${key}`,
  sk: `W#${window}`,
});

/**
 * Counts one use in the window with one atomic `ADD` (a single write, no read) and answers the
 * window's count, this use included. The first use sets the TTL (epoch seconds).
 */
export async function countInWindow(projectId: string, bucket: string, key: string, window: number, ttl: number): Promise<number> {
  const { Attributes } = await db.send(
    new UpdateCommand({
      TableName: tableName,
      Key: rateLimitWindowKey(projectId, bucket, key, window),
      UpdateExpression: 'ADD #count :one SET #ttl = if_not_exists(#ttl, :ttl)',
      ExpressionAttributeNames: { '#count': 'count', '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':one': 1, ':ttl': ttl },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number((Attributes as Partial<RateLimitWindowItem> | undefined)?.count ?? 0);
}

/** Deletes every window of one (bucket, key): a user's counters, when the user is erased. */
export async function deleteRateLimitWindows(projectId: string, bucket: string, key: string): Promise<void> {
  const windows = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': rateLimitWindowKey(projectId, bucket, key, 0).pk },
    ProjectionExpression: 'pk, sk',
  });
  await deleteAll(windows.map((item) => ({ pk: item.pk, sk: item.sk })));
}
