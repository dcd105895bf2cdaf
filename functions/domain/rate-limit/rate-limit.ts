import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#shared/db/client';
import { projectPk } from '#shared/db/keys';
import { RateLimitedError } from '#shared/errors';

const MINUTE_MS = 60_000;

/**
 * Fixed windows (one minute unless `windowMs` says otherwise) counted with one atomic `ADD` per
 * key: a single write, no read. Window items expire by TTL. Several keys (user, room, tenant, ip)
 * are counted in parallel.
 */
export async function consumeRateLimit(
  projectId: string,
  bucket: string,
  keys: readonly string[],
  limitPerWindow: number,
  windowMs = MINUTE_MS,
): Promise<void> {
  const now = Date.now();
  const window = Math.floor(now / windowMs);
  const windowEnd = (window + 1) * windowMs;
  const counts = await Promise.all(
    keys.map(async (key) => {
      const { Attributes } = await db.send(
        new UpdateCommand({
          TableName: tableName,
          Key: { pk: `${projectPk(projectId)}#RL#${bucket}#${key}`, sk: `W#${window}` },
          UpdateExpression: 'ADD #count :one SET #ttl = if_not_exists(#ttl, :ttl)',
          ExpressionAttributeNames: { '#count': 'count', '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':one': 1, ':ttl': Math.ceil(windowEnd / 1000) + 60 },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return Number(Attributes?.count ?? 0);
    }),
  );
  if (counts.some((count) => count > limitPerWindow)) {
    throw new RateLimitedError(Math.max(1, Math.ceil((windowEnd - now) / 1000)));
  }
}
