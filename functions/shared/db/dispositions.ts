import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { replaceActorOf } from './erased-actor';
import { projectPk } from './keys';

/** The project's own disposition codes, one item beside the project (the defaults every project has live in code). */
export const dispositionsKey = (projectId: string) => ({ pk: projectPk(projectId), sk: 'DISPOSITIONS' });

export const dispositionEntry = z.object({ code: z.string(), label: z.string() });
export type DispositionEntry = z.infer<typeof dispositionEntry>;

export const dispositionsItem = z.object({
  pk: z.string(),
  sk: z.string(),
  dispositions: z.array(dispositionEntry),
  updatedAt: z.string(),
  updatedBy: z.string(),
});
export type DispositionsItem = z.infer<typeof dispositionsItem>;

/** The project's own codes in the order the admin gave them; none when it never set any (a consistent read). */
export async function projectDispositions(projectId: string): Promise<DispositionEntry[]> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: dispositionsKey(projectId), ConsistentRead: true }));
  return Item ? dispositionsItem.parse(Item).dispositions : [];
}

/** Replaces the project's own codes. */
export async function putProjectDispositions(
  projectId: string,
  dispositions: readonly DispositionEntry[],
  change: { updatedAt: string; updatedBy: string },
): Promise<DispositionsItem> {
  const item: DispositionsItem = {
    ...dispositionsKey(projectId),
    dispositions: dispositions.map(({ code, label }) => ({ code, label })),
    updatedAt: change.updatedAt,
    updatedBy: change.updatedBy,
  };
  await db.send(new PutCommand({ TableName: tableName, Item: item }));
  return item;
}

/** The codes' last editor, where it is `userId`, becomes the erased user. */
export const forgetDispositionsEditor = (projectId: string, userId: string) =>
  replaceActorOf(dispositionsKey(projectId), ['updatedBy'], userId);
