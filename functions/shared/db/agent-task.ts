import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { replaceActor } from './erased-actor';
import { projectPk } from './keys';
import { queryAll } from './query';
import type { TransactPart } from './transact';

/**
 * An agent task: the work queue of the humans who take rooms over. gsi1 lists a project's tasks of
 * one status, newest first; a status change moves the task's gsi1pk with it.
 */
export const AGENT_TASK_STATUSES = ['claimed', 'resolved'] as const;
export type AgentTaskStatus = (typeof AGENT_TASK_STATUSES)[number];
/** What made the task: only handoffs today. */
export const AGENT_TASK_TRIGGERS = ['ai_handoff'] as const;

export const agentTaskKey = (projectId: string, taskId: string) => ({ pk: `${projectPk(projectId)}#TASK#${taskId}`, sk: 'TASK' });
export const agentTasksIndexKey = (projectId: string, status: AgentTaskStatus) => `${projectPk(projectId)}#TASKS#${status}`;
export const agentTaskIndexSk = (createdAt: string, taskId: string) => `${createdAt}#${taskId}`;

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

/** A handoff's task, claimed from the start. */
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

/** Puts a new task; its condition fails only if the (fresh) task id is taken. */
export const putAgentTaskPart = (item: AgentTaskItem): TransactPart => ({
  Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' },
});

export interface TaskResolution {
  readonly resolvedAt: string;
  readonly resolvedBy: string;
  readonly disposition: string;
  readonly note: string | null;
}

/** Resolves an existing task and moves it to the resolved listing. */
export const resolveAgentTaskPart = (projectId: string, taskId: string, resolution: TaskResolution): TransactPart => ({
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
});

/** One Query of gsi1: the project's tasks of `status`, newest first. */
export async function agentTasksByStatus(projectId: string, status: AgentTaskStatus, limit: number): Promise<AgentTaskItem[]> {
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
  return Items.map((raw) => agentTaskItem.parse(raw));
}

/**
 * The project's tasks a user claimed or resolved: every task of both statuses is read (gsi1, page
 * after page) and filtered on the two fields, so the cost grows with the project's tasks. Used by
 * GDPR export and erasure only.
 */
export async function agentTasksOfUser(projectId: string, userId: string): Promise<AgentTaskItem[]> {
  const pages = await Promise.all(
    AGENT_TASK_STATUSES.map((status) =>
      queryAll({
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :index',
        FilterExpression: 'claimedBy = :user OR resolvedBy = :user',
        ExpressionAttributeValues: { ':index': agentTasksIndexKey(projectId, status), ':user': userId },
      }),
    ),
  );
  return pages.flat().map((raw) => agentTaskItem.parse(raw));
}

/** The task's claimer and resolver, where they are `userId`, become the erased user. */
export const forgetAgentTaskActor = (item: AgentTaskItem, userId: string) =>
  replaceActor(agentTaskKey(item.projectId, item.taskId), item, ['claimedBy', 'resolvedBy'], userId);
