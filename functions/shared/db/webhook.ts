import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { projectPk } from './keys';
import { storedSecret } from './stored-secret';
import { isConditionFailure } from './transact';

/**
 * A webhook registration (deliveries are in `./webhook-delivery.ts`). The secret is either plaintext (`secret`) or AES-256-GCM ciphertext
 * (`secretCiphertext` + `secretIv`, base64, and the id of the key, `secretKeyId`), depending on
 * `WEBHOOK_SECRET_ENCRYPTION_KEY` (`functions/shared/sealing.ts`).
 */
export const webhookItem = z.object({
  pk: z.string(),
  sk: z.string(),
  projectId: z.string(),
  webhookId: z.string(),
  url: z.string(),
  eventTypes: z.array(z.string()),
  ...storedSecret.shape,
  createdAt: z.string(),
  createdBy: z.string(),
});
export type WebhookItem = z.infer<typeof webhookItem>;

/** All registrations of a project share a partition: one Query finds the subscribers of an event. */
export const webhooksPk = (projectId: string) => `${projectPk(projectId)}#WEBHOOKS`;
export const webhookKey = (projectId: string, webhookId: string) => ({ pk: webhooksPk(projectId), sk: `WH#${webhookId}` });

export function toWebhook(item: WebhookItem) {
  return { id: item.webhookId, url: item.url, eventTypes: item.eventTypes, createdAt: item.createdAt, createdBy: item.createdBy };
}

/** Stores a new registration (its id is fresh, so an existing item means a collision and is refused). */
export async function createWebhook(item: WebhookItem): Promise<void> {
  await db.send(new PutCommand({ TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
}

/** Every registration of a project: one Query. */
export async function listWebhookItems(projectId: string): Promise<WebhookItem[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': webhooksPk(projectId) },
    }),
  );
  return Items.map((raw) => webhookItem.parse(raw));
}

export async function findWebhook(projectId: string, webhookId: string): Promise<WebhookItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: webhookKey(projectId, webhookId) }));
  return Item ? webhookItem.parse(Item) : undefined;
}

/** False when the project has no such registration. */
export async function deleteWebhook(projectId: string, webhookId: string): Promise<boolean> {
  try {
    await db.send(
      new DeleteCommand({ TableName: tableName, Key: webhookKey(projectId, webhookId), ConditionExpression: 'attribute_exists(pk)' }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
