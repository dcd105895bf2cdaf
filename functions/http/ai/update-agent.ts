import { updateAgent } from '#domain/ai/agents';
import { httpHandler, ok } from '#edge/http';
import { agentParams, updateAgentBody } from './agent-schemas';

export const handler = httpHandler('UpdateAgent', { params: agentParams, body: updateAgentBody }, async ({ params, body, caller }) =>
  ok(await updateAgent(caller.projectId, params.agentId, body)),
);
