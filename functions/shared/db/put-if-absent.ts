import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import { isConditionFailure } from './transact';

/**
 * Writes `item` unless an item with its key is there already, in one conditional put: `false` when
 * one was (an id taken, a first use that another request won). Entities name the operation; this
 * is the one place that writes it.
 */
export async function putIfAbsent(item: Record<string, unknown>): Promise<boolean> {
  try {
    await db.send(new PutCommand({ TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
