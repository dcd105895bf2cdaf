import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { pushConfigPk, sealedSecret } from './push-config';
import { putIfAbsent } from './put-if-absent';

/** The project's VAPID key pair, generated on first use, beside its push configurations. */
export const vapidKey = (projectId: string) => ({ pk: pushConfigPk(projectId), sk: 'VAPID' });

export const vapidItem = z.object({ publicKey: z.string(), privateKey: sealedSecret, createdAt: z.string() });
export type VapidItem = z.infer<typeof vapidItem>;

export async function findVapidKeys(projectId: string): Promise<VapidItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: vapidKey(projectId), ConsistentRead: true }));
  return Item ? vapidItem.parse(Item) : undefined;
}

/** Stores a new pair unless the project has one already; false when it had (a concurrent first use won). */
export const createVapidKeys = (projectId: string, item: VapidItem): Promise<boolean> => putIfAbsent({ ...vapidKey(projectId), ...item });

/** Replaces the stored private key with the same key sealed anew (a newer format or key). */
export async function resealVapidPrivateKey(projectId: string, privateKey: VapidItem['privateKey']): Promise<void> {
  await db.send(
    new UpdateCommand({
      TableName: tableName,
      Key: vapidKey(projectId),
      UpdateExpression: 'SET privateKey = :sealed',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':sealed': privateKey },
    }),
  );
}
