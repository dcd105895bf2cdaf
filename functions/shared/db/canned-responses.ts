import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { replaceActorOf } from './erased-actor';
import { projectPk } from './keys';
import { isConditionFailure } from './transact';

/**
 * A project's canned responses, all in one item beside the project: the list agents load (one
 * GetItem, however many there are) and the shortcut uniqueness check read the same item, and a
 * change is one put conditional on the `version` it read. The count is bounded
 * (`MAX_CANNED_RESPONSES` of `#domain/support/canned-responses`) so the item stays far below
 * DynamoDB's 400 KB.
 */
export const cannedResponsesKey = (projectId: string) => ({ pk: projectPk(projectId), sk: 'SUPPORT#CANNED' });

export const cannedResponse = z.object({
  responseId: z.string(),
  title: z.string(),
  content: z.string(),
  shortcut: z.nullable(z.string()),
  tags: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type CannedResponse = z.infer<typeof cannedResponse>;

export const cannedResponsesItem = z.object({
  pk: z.string(),
  sk: z.string(),
  responses: z.array(cannedResponse),
  version: z.number().check(z.int()),
  updatedAt: z.string(),
  updatedBy: z.string(),
});
export type CannedResponsesItem = z.infer<typeof cannedResponsesItem>;

/** The project's responses and the version they were read at (0: never written). */
export async function readCannedResponses(
  projectId: string,
  options: { consistent?: boolean } = {},
): Promise<{ responses: CannedResponse[]; version: number }> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: cannedResponsesKey(projectId), ConsistentRead: options.consistent }),
  );
  if (!Item) return { responses: [], version: 0 };
  const item = cannedResponsesItem.parse(Item);
  return { responses: item.responses, version: item.version };
}

/** Replaces the list if it is still at `readVersion`: `false` when another change came first. */
export async function replaceCannedResponses(
  projectId: string,
  readVersion: number,
  responses: readonly CannedResponse[],
  change: { updatedAt: string; updatedBy: string },
): Promise<boolean> {
  const item: CannedResponsesItem = {
    ...cannedResponsesKey(projectId),
    responses: [...responses],
    version: readVersion + 1,
    updatedAt: change.updatedAt,
    updatedBy: change.updatedBy,
  };
  try {
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: item,
        ConditionExpression: readVersion === 0 ? 'attribute_not_exists(pk)' : 'version = :read',
        ...(readVersion === 0 ? {} : { ExpressionAttributeValues: { ':read': readVersion } }),
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** The list's last editor, where it is `userId`, becomes the erased user. */
export const forgetCannedResponsesEditor = (projectId: string, userId: string) =>
  replaceActorOf(cannedResponsesKey(projectId), ['updatedBy'], userId);
