import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { replaceActor } from './erased-actor';
import { projectPk } from './keys';
import { queryAll } from './query';
import { isConditionFailure, type TransactPart } from './transact';

/**
 * An in-room AI agent. All of a project's agents share one partition, so the mention subscriber
 * reads them with one Query; the partition also holds the handles' claims (`./agent-handle`),
 * under another sort-key prefix.
 */
export const agentsPk = (projectId: string) => `${projectPk(projectId)}#AGENTS`;
const AGENT_SK_PREFIX = 'A#';
export const agentKey = (projectId: string, agentId: string) => ({ pk: agentsPk(projectId), sk: `${AGENT_SK_PREFIX}${agentId}` });

export const agentItem = z.object({
  pk: z.string(),
  sk: z.string(),
  agentId: z.string(),
  handle: z.string(),
  name: z.string(),
  instructions: z.string(),
  model: z.nullable(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
  createdBy: z.string(),
});
export type AgentItem = z.infer<typeof agentItem>;

export type NewAgent = Omit<AgentItem, 'pk' | 'sk'>;

export const agentItemFor = (projectId: string, agent: NewAgent): AgentItem => ({ ...agentKey(projectId, agent.agentId), ...agent });

/** Every agent of the project; `consistent` so a list read right after a create shows it. */
export async function queryAgents(projectId: string, options: { consistent: boolean }): Promise<AgentItem[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': agentsPk(projectId), ':prefix': AGENT_SK_PREFIX },
    ConsistentRead: options.consistent,
  });
  return items.map((raw) => agentItem.parse(raw));
}

/** The agent (a consistent read), `undefined` when the project has none by that id. */
export async function findAgent(projectId: string, agentId: string): Promise<AgentItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: agentKey(projectId, agentId), ConsistentRead: true }));
  return Item ? agentItem.parse(Item) : undefined;
}

/** Puts a new agent; its condition fails if the id is somehow taken. Goes with its handle's claim. */
export const putAgentPart = (item: AgentItem): TransactPart => ({
  Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' },
});

/** Deletes the agent; its condition fails when a concurrent request deleted it first. */
export const deleteAgentPart = (projectId: string, agentId: string): TransactPart => ({
  Delete: { TableName: tableName, Key: agentKey(projectId, agentId), ConditionExpression: 'attribute_exists(pk)' },
});

export interface AgentChanges {
  readonly name?: string;
  readonly instructions?: string;
  /** `null` clears it. */
  readonly model?: string | null;
}

/** Sets the given fields and `updatedAt`; the agent as it now is, `undefined` when there is no such agent. */
export async function updateAgentFields(
  projectId: string,
  agentId: string,
  changes: AgentChanges,
  updatedAt: string,
): Promise<AgentItem | undefined> {
  const sets = ['updatedAt = :now'];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':now': updatedAt };
  for (const field of ['name', 'instructions', 'model'] as const) {
    const value = changes[field];
    if (value === undefined) continue;
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: agentKey(projectId, agentId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return agentItem.parse(Attributes);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** The agent's creator, where it is `userId`, becomes the erased user. */
export const forgetAgentCreator = (item: AgentItem, userId: string) => replaceActor(item, item, ['createdBy'], userId);
