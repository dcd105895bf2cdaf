import { createAgent } from '#domain/ai/agents';
import { created, httpHandler } from '#edge/http';
import { createAgentBody } from './agent-schemas';

/** 201 with the agent; 409 agent_handle_taken when another agent of the project has the handle. */
export const handler = httpHandler('CreateAgent', { body: createAgentBody }, async ({ body, caller }) =>
  created(await createAgent(caller, body)),
);
