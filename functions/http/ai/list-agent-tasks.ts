import { AGENT_TASK_STATUSES, listAgentTasks } from '#domain/ai/agent-tasks';
import { httpHandler, ok } from '#edge/http';
import * as z from '#shared/schema';
import { queryInt } from '../params';

const query = z.object({
  status: z._default(z.enum(AGENT_TASK_STATUSES), 'claimed'),
  limit: z._default(queryInt(1, 100), 50),
});

/** The project's tasks of one status (`claimed` by default), newest first. */
export const handler = httpHandler('ListAgentTasks', { query }, async ({ query, caller }) =>
  ok({ tasks: await listAgentTasks(caller.projectId, query.status, query.limit) }),
);
