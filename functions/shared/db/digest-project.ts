import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';

/**
 * The directory of projects that have had a digest subscriber: the scheduled run (which belongs to
 * no project) pages through it to reach every project. Its partition names no tenant: `_digest`
 * can never be a project id (ids start with a letter or digit), like the `_public` rate-limit keys.
 * Entries stay when a project's last subscriber leaves; a page of such a project finds nobody.
 */
export const DIGEST_PROJECTS_PK = 'P#_digest#PROJECTS';
const projectSk = (projectId: string) => `P#${projectId}`;

export const digestProjectItem = z.object({
  pk: z.literal(DIGEST_PROJECTS_PK),
  sk: z.string(),
  projectId: z.string(),
  addedAt: z.string(),
});

/** Adds the project (again: an unconditional put of the same key is idempotent). */
export async function addDigestProject(projectId: string, now: string): Promise<void> {
  await db.send(
    new PutCommand({ TableName: tableName, Item: { pk: DIGEST_PROJECTS_PK, sk: projectSk(projectId), projectId, addedAt: now } }),
  );
}

/** One page of the directory, after the project `after`; `next` names the last one when more may follow. */
export async function digestProjectsPage(page: { after?: string; limit: number }): Promise<{ projectIds: string[]; next?: string }> {
  const { Items = [], LastEvaluatedKey } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': DIGEST_PROJECTS_PK },
      Limit: page.limit,
      ...(page.after === undefined ? {} : { ExclusiveStartKey: { pk: DIGEST_PROJECTS_PK, sk: projectSk(page.after) } }),
    }),
  );
  const projectIds = Items.map((item) => digestProjectItem.parse(item).projectId);
  return LastEvaluatedKey && projectIds.length > 0 ? { projectIds, next: projectIds.at(-1) as string } : { projectIds };
}
