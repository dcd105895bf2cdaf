import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import { projectPk } from './keys';

/** A project's own monthly AI quota, beside the project item (set by the operator). */
export const projectAiQuotaKey = (projectId: string) => ({ pk: projectPk(projectId), sk: 'AIQUOTA' });

/** The project's own quota, `undefined` when it has none (the deployment's `AI_MONTHLY_QUOTA` applies). */
export async function findProjectAiQuota(projectId: string): Promise<number | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: projectAiQuotaKey(projectId) }));
  return typeof Item?.monthlyInvocations === 'number' ? Item.monthlyInvocations : undefined;
}

export async function putProjectAiQuota(projectId: string, monthlyInvocations: number): Promise<void> {
  await db.send(new PutCommand({ TableName: tableName, Item: { ...projectAiQuotaKey(projectId), monthlyInvocations } }));
}

/** Drops the project's own quota (the item stays, without the attribute, as it always has). */
export async function removeProjectAiQuota(projectId: string): Promise<void> {
  await db.send(
    new UpdateCommand({ TableName: tableName, Key: projectAiQuotaKey(projectId), UpdateExpression: 'REMOVE monthlyInvocations' }),
  );
}
