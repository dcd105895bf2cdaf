import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { replaceActorOf } from './erased-actor';
import { projectPk } from './keys';

/** A project's support hours: one item beside the project, replaced whole by `PUT /admin/support/business-hours`. */
export const businessHoursKey = (projectId: string) => ({ pk: projectPk(projectId), sk: 'SUPPORT#HOURS' });

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export const openingRange = z.object({ open: z.string(), close: z.string() });
export type OpeningRange = z.infer<typeof openingRange>;

export const businessHoursConfig = z.object({
  timezone: z.string(),
  weekly: z.partialRecord(z.enum(WEEKDAYS), z.array(openingRange)),
  holidays: z.array(z.string()),
});
export type BusinessHoursConfig = z.infer<typeof businessHoursConfig>;

const businessHoursItem = z.object({
  ...businessHoursConfig.shape,
  pk: z.string(),
  sk: z.string(),
  updatedAt: z.string(),
  updatedBy: z.string(),
});
export type BusinessHoursItem = z.infer<typeof businessHoursItem>;

/** The project's hours, `undefined` when never set. */
export async function findBusinessHours(projectId: string): Promise<BusinessHoursItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: businessHoursKey(projectId) }));
  return Item ? businessHoursItem.parse(Item) : undefined;
}

export async function putBusinessHours(
  projectId: string,
  hours: BusinessHoursConfig,
  change: { updatedAt: string; updatedBy: string },
): Promise<BusinessHoursItem> {
  const item: BusinessHoursItem = { ...businessHoursKey(projectId), ...hours, ...change };
  await db.send(new PutCommand({ TableName: tableName, Item: item }));
  return item;
}

/** The hours' last editor, where it is `userId`, becomes the erased user. */
export const forgetBusinessHoursEditor = (projectId: string, userId: string) =>
  replaceActorOf(businessHoursKey(projectId), ['updatedBy'], userId);
