import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import type { FeatureFlag } from '#wiring';
import { db, tableName } from './client';
import { replaceActorOf } from './erased-actor';
import { projectPk } from './keys';

export type FlagOverrides = Partial<Record<FeatureFlag, boolean>>;

/** A project admin's overrides of the feature flag defaults, one item per project. */
export const featureFlagsItem = z.object({
  pk: z.string(),
  sk: z.literal('FLAGS'),
  overrides: z.record(z.string(), z.boolean()),
  updatedBy: z.string(),
  updatedAt: z.string(),
});
export type FeatureFlagsItem = z.infer<typeof featureFlagsItem>;

export const featureFlagsKey = (projectId: string) => ({ pk: projectPk(projectId), sk: 'FLAGS' as const });

/** The project's overrides; none when it has not set any. */
export async function findFlagOverrides(projectId: string): Promise<FlagOverrides> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: featureFlagsKey(projectId) }));
  return Item ? (featureFlagsItem.parse(Item).overrides as FlagOverrides) : {};
}

export async function putFlagOverrides(projectId: string, overrides: FlagOverrides, updatedBy: string, updatedAt: string): Promise<void> {
  const item: FeatureFlagsItem = { ...featureFlagsKey(projectId), overrides, updatedBy, updatedAt };
  await db.send(new PutCommand({ TableName: tableName, Item: item }));
}

/** The overrides' last editor, where it is `userId`, becomes the erased user. */
export const forgetFlagsEditor = (projectId: string, userId: string) => replaceActorOf(featureFlagsKey(projectId), ['updatedBy'], userId);
