import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { agentTaskKey, agentTasksIndexKey } from '#shared/db/ai';
import { db, tableName } from '#shared/db/client';
import * as z from '#shared/schema';

/**
 * Agent tasks: the work queue of the humans who take rooms over. A handoff creates its task already
 * claimed (by the agent named, or the caller) and its completion resolves it, both in the
 * handoff's own transaction (`#domain/ai/handoff`). gsi1 lists a project's tasks of one status,
 * newest first; a status change moves the task's gsi1pk with it.
 */

export const AGENT_TASK_STATUSES = ['claimed', 'resolved'] as const;
export type AgentTaskStatus = (typeof AGENT_TASK_STATUSES)[number];
/** What made the task: only handoffs today. */
export const AGENT_TASK_TRIGGERS = ['ai_handoff'] as const;

export const agentTaskItem = z.object({
  pk: z.string(),
  sk: z.string(),
  gsi1pk: z.string(),
  gsi1sk: z.string(),
  projectId: z.string(),
  taskId: z.string(),
  trigger_source: z.enum(AGENT_TASK_TRIGGERS),
  status: z.enum(AGENT_TASK_STATUSES),
  roomId: z.string(),
  handoffId: z.string(),
  claimedBy: z.string(),
  claimedAt: z.string(),
  /** The handoff's note, for whoever works the task. */
  note: z.nullable(z.string()),
  createdAt: z.string(),
  resolvedAt: z.nullable(z.string()),
  resolvedBy: z.nullable(z.string()),
  disposition: z.nullable(z.string()),
  resolutionNote: z.nullable(z.string()),
});
export type AgentTaskItem = z.infer<typeof agentTaskItem>;

export const agentTaskIndexSk = (createdAt: string, taskId: string) => `${createdAt}#${taskId}`;

/** A handoff's task, claimed from the start; written by the handoff's transaction. */
export function handoffTaskItem(
  projectId: string,
  input: { taskId: string; roomId: string; handoffId: string; claimedBy: string; note: string | null; createdAt: string },
): AgentTaskItem {
  return {
    ...agentTaskKey(projectId, input.taskId),
    gsi1pk: agentTasksIndexKey(projectId, 'claimed'),
    gsi1sk: agentTaskIndexSk(input.createdAt, input.taskId),
    projectId,
    taskId: input.taskId,
    trigger_source: 'ai_handoff',
    status: 'claimed',
    roomId: input.roomId,
    handoffId: input.handoffId,
    claimedBy: input.claimedBy,
    claimedAt: input.createdAt,
    note: input.note,
    createdAt: input.createdAt,
    resolvedAt: null,
    resolvedBy: null,
    disposition: null,
    resolutionNote: null,
  };
}

/** The `TransactWriteItems` entry that resolves a claimed task and moves it to the resolved listing. */
export function resolveTaskUpdate(
  projectId: string,
  taskId: string,
  resolution: { resolvedAt: string; resolvedBy: string; disposition: string; note: string | null },
) {
  return {
    Update: {
      TableName: tableName,
      Key: agentTaskKey(projectId, taskId),
      UpdateExpression:
        'SET #status = :resolved, gsi1pk = :index, resolvedAt = :at, resolvedBy = :by, disposition = :disposition, resolutionNote = :note',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':resolved': 'resolved',
        ':index': agentTasksIndexKey(projectId, 'resolved'),
        ':at': resolution.resolvedAt,
        ':by': resolution.resolvedBy,
        ':disposition': resolution.disposition,
        ':note': resolution.note,
      },
    },
  };
}

export function toAgentTask(item: AgentTaskItem) {
  const { pk: _pk, sk: _sk, gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, projectId: _projectId, ...task } = item;
  return task;
}
export type AgentTask = ReturnType<typeof toAgentTask>;

/** One Query of gsi1: the project's tasks of `status`, newest first. */
export async function listAgentTasks(projectId: string, status: AgentTaskStatus, limit: number): Promise<AgentTask[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :index',
      ExpressionAttributeValues: { ':index': agentTasksIndexKey(projectId, status) },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return Items.map((raw) => toAgentTask(agentTaskItem.parse(raw)));
}
