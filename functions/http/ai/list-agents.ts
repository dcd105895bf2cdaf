import { listAgents } from '#domain/ai/agents';
import { httpHandler, ok } from '#edge/http';
import { isProjectAdmin } from '#shared/auth';

/**
 * Every user may list the agents they can @mention; an agent's instructions are its system prompt,
 * which only admins (and the API key) who write them see.
 */
export const handler = httpHandler('ListAgents', {}, async ({ caller }) => {
  const agents = await listAgents(caller.projectId);
  if (isProjectAdmin(caller)) return ok({ agents });
  return ok({ agents: agents.map(({ instructions: _instructions, ...agent }) => agent) });
});
