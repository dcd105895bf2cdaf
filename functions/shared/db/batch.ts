import { BatchGetCommand, BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import { queryAll } from './query';

type Item = Record<string, unknown>;
const MAX_ROUNDS = 8;
const backoff = (round: number) => new Promise((resolve) => setTimeout(resolve, 25 * 2 ** round));

type WriteRequest = { PutRequest: { Item: Item } } | { DeleteRequest: { Key: Item } };

/** Puts items 25 per request, retrying what DynamoDB leaves unprocessed with backoff. */
export const putAll = (items: readonly Item[]) => writeAll(items.map((Item) => ({ PutRequest: { Item } })));

/** Deletes keys 25 per request, the same way. */
export const deleteAll = (keys: readonly Item[]) => writeAll(keys.map((Key) => ({ DeleteRequest: { Key } })));

/** Deletes every item of one partition (an entity's per-user partition, at erasure): how many there were. */
export async function deletePartition(pk: string): Promise<number> {
  const keys = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': pk },
    ProjectionExpression: 'pk, sk',
  });
  await deleteAll(keys);
  return keys.length;
}

async function writeAll(all: readonly WriteRequest[]): Promise<void> {
  for (let start = 0; start < all.length; start += 25) {
    let requests = all.slice(start, start + 25);
    for (let round = 0; requests.length > 0; round++) {
      if (round >= MAX_ROUNDS) throw new Error(`DynamoDB left ${requests.length} writes unprocessed`);
      if (round > 0) await backoff(round);
      const { UnprocessedItems } = await db.send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
      requests = (UnprocessedItems?.[tableName] ?? []) as WriteRequest[];
    }
  }
}

/** Gets items 100 keys per request, retrying unprocessed keys; order of the result is not the keys' order. */
export async function getAll(keys: readonly Item[]): Promise<Item[]> {
  const found: Item[] = [];
  for (let start = 0; start < keys.length; start += 100) {
    let pending: Item[] = keys.slice(start, start + 100) as Item[];
    for (let round = 0; pending.length > 0; round++) {
      if (round >= MAX_ROUNDS) throw new Error(`DynamoDB left ${pending.length} reads unprocessed`);
      if (round > 0) await backoff(round);
      const { Responses, UnprocessedKeys } = await db.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending } } }));
      found.push(...(Responses?.[tableName] ?? []));
      pending = UnprocessedKeys?.[tableName]?.Keys ?? [];
    }
  }
  return found;
}
