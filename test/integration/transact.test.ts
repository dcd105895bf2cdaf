import { describe, expect, it } from 'vitest';
import { tableName } from '#shared/db/client';
import { transactWrite } from '#shared/db/transact';
import { uniqueId } from '../support/api';
import { get } from '../support/raw-table';

/**
 * All-or-nothing writes through DynamoDB Local. (Local runs transactions one at a time and never
 * cancels one for a conflict: the retry on conflicts is tested against a fault server, test/unit/transact-retry.test.ts.)
 */

const counterKey = () => ({ pk: `TEST#${uniqueId('tx')}`, sk: 'COUNTER' });
const increment = (Key: Record<string, string>) => ({
  Update: {
    TableName: tableName,
    Key,
    UpdateExpression: 'ADD #count :one',
    ExpressionAttributeNames: { '#count': 'count' },
    ExpressionAttributeValues: { ':one': 1 },
  },
});

describe('transactWrite', () => {
  it("writes nothing when one part's condition fails, and throws at once", async () => {
    const Key = counterKey();
    const guarded = { pk: Key.pk, sk: 'GUARD' };
    await transactWrite([{ Put: { TableName: tableName, Item: guarded } }]);
    const failing = transactWrite([
      increment(Key),
      { Put: { TableName: tableName, Item: guarded, ConditionExpression: 'attribute_not_exists(pk)' } },
    ]);
    await expect(failing).rejects.toMatchObject({ name: 'TransactionCanceledException' });
    expect(await get(Key.pk, Key.sk)).toBeUndefined();
  });
});
