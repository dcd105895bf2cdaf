import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { projectPk } from './keys';

/**
 * A project's embed widget settings: the site origins whose pages may start guest sessions, and
 * the room `data-room="support"` names. One item beside the project, replaced whole by
 * `PUT /admin/widget`. It names no user, so erasure has nothing to do here.
 */
export const widgetSettingsKey = (projectId: string) => ({ pk: projectPk(projectId), sk: 'WIDGET' as const });

export const widgetSettingsConfig = z.object({
  allowedOrigins: z.array(z.string()),
  supportRoomId: z.nullable(z.string()),
});
export type WidgetSettingsConfig = z.infer<typeof widgetSettingsConfig>;

const widgetSettingsItem = z.object({
  ...widgetSettingsConfig.shape,
  pk: z.string(),
  sk: z.literal('WIDGET'),
  updatedAt: z.string(),
});
export type WidgetSettingsItem = z.infer<typeof widgetSettingsItem>;

/** The project's widget settings, `undefined` when never set. */
export async function findWidgetSettings(projectId: string): Promise<WidgetSettingsItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: widgetSettingsKey(projectId) }));
  return Item ? widgetSettingsItem.parse(Item) : undefined;
}

export async function putWidgetSettings(projectId: string, settings: WidgetSettingsConfig, updatedAt: string): Promise<WidgetSettingsItem> {
  const item: WidgetSettingsItem = { ...widgetSettingsKey(projectId), ...settings, updatedAt };
  await db.send(new PutCommand({ TableName: tableName, Item: item }));
  return item;
}
