import { invokeAgent } from '#domain/ai/agents';
import { created, httpHandler } from '#edge/http';
import { agentParams, invokeAgentBody } from './agent-schemas';

/** 201 with the agent's stored message once it answered; 409 human_handoff_active during a handoff. */
export const handler = httpHandler('InvokeAgent', { params: agentParams, body: invokeAgentBody }, async ({ params, body, user }) =>
  created({ message: await invokeAgent(user, params.agentId, body) }),
);
