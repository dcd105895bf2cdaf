import { deleteAgent } from '#domain/ai/agents';
import { httpHandler, noContent } from '#edge/http';
import { agentParams } from './agent-schemas';

export const handler = httpHandler('DeleteAgent', { params: agentParams }, async ({ params, caller }) => {
  await deleteAgent(caller.projectId, params.agentId);
  return noContent();
});
