import * as z from '#shared/schema';
import { agentsPk } from './agent';
import { tableName } from './client';
import { queryAll } from './query';
import type { TransactPart } from './transact';

/**
 * The claim of an agent handle, beside the agents in their partition: written in the agent's own
 * transaction, conditional on absence, so two agents of a project never share a handle (the
 * handle is the agent's user id, `agent:<handle>`); deleted with the agent, which frees it.
 */
const HANDLE_SK_PREFIX = 'H#';
export const agentHandleKey = (projectId: string, handle: string) => ({ pk: agentsPk(projectId), sk: `${HANDLE_SK_PREFIX}${handle}` });

export const agentHandleItem = z.object({ pk: z.string(), sk: z.string(), agentId: z.string(), createdAt: z.string() });
export type AgentHandleItem = z.infer<typeof agentHandleItem>;

/** Claims `handle` for `agentId`; the condition fails when another agent of the project holds it. */
export const claimAgentHandlePart = (projectId: string, handle: string, agentId: string, createdAt: string): TransactPart => ({
  Put: {
    TableName: tableName,
    Item: { ...agentHandleKey(projectId, handle), agentId, createdAt } satisfies AgentHandleItem,
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

/** Frees `handle`, only while `agentId` holds it (a concurrent delete and re-create keeps the new claim). */
export const releaseAgentHandlePart = (projectId: string, handle: string, agentId: string): TransactPart => ({
  Delete: {
    TableName: tableName,
    Key: agentHandleKey(projectId, handle),
    ConditionExpression: 'agentId = :agentId',
    ExpressionAttributeValues: { ':agentId': agentId },
  },
});

/** The project's claimed handles that begin with `prefix` (consistent): one Query of the claims' sort-key range. */
export async function claimedAgentHandles(projectId: string, prefix: string): Promise<string[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': agentsPk(projectId), ':prefix': `${HANDLE_SK_PREFIX}${prefix}` },
    ProjectionExpression: 'sk',
    ConsistentRead: true,
  });
  return items.map((item) => String(item.sk).slice(HANDLE_SK_PREFIX.length));
}
