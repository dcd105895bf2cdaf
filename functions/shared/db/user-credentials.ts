import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { userPk } from './keys';
import { isConditionFailure } from './transact';

/** A user's sign-in secret (scrypt) and the roles their session tokens carry. */
export const userCredentialsItem = z.object({
  pk: z.string(),
  sk: z.literal('CREDENTIALS'),
  projectId: z.string(),
  userId: z.string(),
  passwordHash: z.string(),
  roles: z.array(z.string()),
  updatedAt: z.string(),
});
export type UserCredentialsItem = z.infer<typeof userCredentialsItem>;

export const userCredentialsKey = (projectId: string, userId: string) => ({
  pk: userPk(projectId, userId),
  sk: 'CREDENTIALS' as const,
});

/** The user's credentials, `undefined` when none are set (an eventually consistent read). */
export async function findUserCredentials(projectId: string, userId: string): Promise<UserCredentialsItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: userCredentialsKey(projectId, userId) }));
  return Item ? userCredentialsItem.parse(Item) : undefined;
}

export async function putUserCredentials(item: UserCredentialsItem): Promise<void> {
  await db.send(new PutCommand({ TableName: tableName, Item: item }));
}

/**
 * Stores `newHash` in place of `oldHash` (the same password under new parameters), unless the
 * password was changed in the meantime: then the new password's hash stays.
 */
export async function replacePasswordHash(projectId: string, userId: string, oldHash: string, newHash: string): Promise<void> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: userCredentialsKey(projectId, userId),
        UpdateExpression: 'SET passwordHash = :new',
        ConditionExpression: 'passwordHash = :old',
        ExpressionAttributeValues: { ':new': newHash, ':old': oldHash },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** Deletes the user's credentials (idempotent). */
export async function deleteUserCredentials(projectId: string, userId: string): Promise<void> {
  await db.send(new DeleteCommand({ TableName: tableName, Key: userCredentialsKey(projectId, userId) }));
}
