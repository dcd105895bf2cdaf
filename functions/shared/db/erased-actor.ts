import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ERASED_USER_ID } from '#shared/ids';
import { db, tableName } from './client';
import { isConditionFailure } from './transact';

type Key = { readonly pk: string; readonly sk: string };

/**
 * Where a record must keep who acted (a task's claimer, a room's creator) after that user's
 * erasure, the fields naming `userId` are set to {@link ERASED_USER_ID}, conditional on each still
 * naming them: `false` when none did or one changed meanwhile (the erasure reads again on retry).
 * Entities call it with their own key and fields; it is the one way an actor is forgotten.
 */
export async function replaceActor(
  key: Key,
  item: Readonly<Record<string, unknown>>,
  fields: readonly string[],
  userId: string,
): Promise<boolean> {
  const naming = fields.filter((field) => item[field] === userId);
  if (naming.length === 0) return false;
  const names = Object.fromEntries(naming.map((field, index) => [`#f${index}`, field]));
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: key.pk, sk: key.sk },
        UpdateExpression: `SET ${naming.map((_, index) => `#f${index} = :erased`).join(', ')}`,
        ConditionExpression: naming.map((_, index) => `#f${index} = :user`).join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ':erased': ERASED_USER_ID, ':user': userId },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** The same for a single item read by key first (a project's settings item naming its last editor). */
export async function replaceActorOf(key: Key, fields: readonly string[], userId: string): Promise<boolean> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: { pk: key.pk, sk: key.sk }, ConsistentRead: true }));
  return Item ? replaceActor(key, Item, fields, userId) : false;
}
