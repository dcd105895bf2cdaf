import { type AgentTaskItem, type AgentTaskStatus, agentTasksByStatus } from '#shared/db/agent-task';

/**
 * Agent tasks: the work queue of the humans who take rooms over. A handoff creates its task already
 * claimed (by the agent named, or the caller) and its completion resolves it, both in the
 * handoff's own transaction (`#domain/ai/handoff`).
 */

export { AGENT_TASK_STATUSES, type AgentTaskStatus } from '#shared/db/agent-task';

export function toAgentTask(item: AgentTaskItem) {
  const { pk: _pk, sk: _sk, gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, projectId: _projectId, ...task } = item;
  return task;
}
export type AgentTask = ReturnType<typeof toAgentTask>;

/** `GET /agent-queue/tasks`: the project's tasks of `status`, newest first. */
export async function listAgentTasks(projectId: string, status: AgentTaskStatus, limit: number): Promise<AgentTask[]> {
  return (await agentTasksByStatus(projectId, status, limit)).map(toAgentTask);
}
