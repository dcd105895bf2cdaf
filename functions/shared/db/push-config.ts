import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { projectPk } from './keys';

/**
 * A project's push configuration for one environment (`PUT`/`GET /push/config`): provider settings,
 * their keys sealed. The project's configurations share a partition with its VAPID key pair
 * (`./push-vapid.ts`). docs/data-model.md ("Push").
 */

export const pushConfigPk = (projectId: string) => `${projectPk(projectId)}#PUSHCFG`;
export const PUSH_CONFIG_SK_PREFIX = 'ENV#';
export const pushConfigKey = (projectId: string, environment: string) => ({
  pk: pushConfigPk(projectId),
  sk: `${PUSH_CONFIG_SK_PREFIX}${environment}`,
});

/**
 * A secret stored the way webhook secrets are (`functions/shared/sealing.ts`): plaintext where no
 * key is set (customers' keys only), else sealed, with the id of the key (absent on older values).
 */
export const sealedSecret = z.union([
  z.object({ secret: z.string() }),
  z.object({ secretCiphertext: z.string(), secretIv: z.string(), secretKeyId: z.optional(z.string()) }),
]);

export const pushConfigItem = z.object({
  environment: z.string(),
  fcmServerKey: z.optional(sealedSecret),
  fcmProjectId: z.optional(z.string()),
  fcmServiceAccount: z.optional(sealedSecret),
  apnsBundleId: z.optional(z.string()),
  apnsUseSandbox: z.boolean(),
  apnsKeyId: z.optional(z.string()),
  apnsTeamId: z.optional(z.string()),
  apnsPrivateKey: z.optional(sealedSecret),
  webPushEnabled: z.boolean(),
  updatedAt: z.string(),
});
export type PushConfigItem = z.infer<typeof pushConfigItem>;

/** Every environment's configuration of a project: one Query. */
export async function listPushConfigItems(projectId: string): Promise<PushConfigItem[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :env)',
      ExpressionAttributeValues: { ':pk': pushConfigPk(projectId), ':env': PUSH_CONFIG_SK_PREFIX },
    }),
  );
  return Items.map((raw) => pushConfigItem.parse(raw));
}

export async function findPushConfig(projectId: string, environment: string): Promise<PushConfigItem | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: pushConfigKey(projectId, environment), ConsistentRead: true }),
  );
  return Item ? pushConfigItem.parse(Item) : undefined;
}

/** Writes the environment's configuration whole; undefined fields are dropped, not stored as NULL (`removeUndefinedValues`). */
export async function putPushConfig(projectId: string, item: PushConfigItem): Promise<void> {
  await db.send(new PutCommand({ TableName: tableName, Item: { ...pushConfigKey(projectId, item.environment), ...item } }));
}
