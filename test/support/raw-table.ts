import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll } from 'vitest';
import { rateLimitWindowKey } from '#shared/db/rate-limit-window';
import { runtime } from './api';

/**
 * Raw access to the runtime's table with a client of the test's own, to check what handlers and
 * domain code stored, under which keys. Destroyed after the file's tests.
 */
export const raw = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    endpoint: runtime().env.AWS_ENDPOINT_URL_DYNAMODB,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  }),
);
afterAll(() => raw.destroy());

export const table = () => runtime().tableName;

export const get = async (pk: string, sk: string) => (await raw.send(new GetCommand({ TableName: table(), Key: { pk, sk } }))).Item;

export const partition = async (pk: string) =>
  (await raw.send(new QueryCommand({ TableName: table(), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } })))
    .Items ?? [];

/**
 * A connection's entry in its room's packed list, read the way the data model documents it (any
 * `C#~` shard of the room's `#CONNS` partition, whose string set `c` holds `"<connectionId> <userId>
 * <ttl>"`), with the shard's sort key and expiry; `undefined` when no shard lists it.
 */
export async function roomListEntry(projectId: string, roomId: string, connectionId: string) {
  const shards = (await partition(`P#${projectId}#R#${roomId}#CONNS`)).filter((item) => String(item.sk).startsWith('C#~'));
  for (const shard of shards) {
    for (const entry of (shard.c as Set<string> | undefined) ?? []) {
      const [id, userId, ttl] = entry.split(' ');
      if (id === connectionId) return { connectionId, userId, ttl: Number(ttl), shard: String(shard.sk), shardTtl: Number(shard.ttl) };
    }
  }
  return undefined;
}

/** Writes an item as it is, bypassing the service: for tests that tamper with what it stored. */
export const put = async (item: Record<string, unknown>) => {
  await raw.send(new PutCommand({ TableName: table(), Item: item }));
};

/**
 * Sets one rate limiter's counters (its own keys, `functions/shared/db/rate-limit-window.ts`) in the
 * current window and the next to `count`, so that a test of a limit crosses it with a few real
 * requests instead of spending the whole budget first. Public routes count in the `_public` space.
 */
export async function setRateLimitWindows(space: string, bucket: string, key: string, count: number, windowSeconds = 60) {
  const current = Math.floor(Date.now() / 1000 / windowSeconds);
  for (const window of [current, current + 1]) {
    const itemKey = rateLimitWindowKey(space, bucket, key, window);
    await put({ ...itemKey, count, ttl: (window + 2) * windowSeconds + 60 });
  }
}
