import { AGENT_HANDLE_PATTERN } from '#domain/ai/agent-handles';
import { MAX_AGENT_INSTRUCTIONS_LENGTH, MAX_AGENT_MODEL_LENGTH, MAX_AGENT_NAME_LENGTH, MAX_INVOKE_PROMPT_LENGTH } from '#domain/ai/agents';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';

/** Schemas of the agent routes. */

export const agentParams = z.object({ agentId: idSchema });

const handle = z.string().check(z.regex(AGENT_HANDLE_PATTERN, 'must be 2-32 characters of a-z, 0-9 and -, starting with a letter'));
const name = z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_AGENT_NAME_LENGTH));
const instructions = z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_AGENT_INSTRUCTIONS_LENGTH));
const model = z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_AGENT_MODEL_LENGTH));

/** Without `handle`, the agent's handle is derived from its name. */
export const createAgentBody = z.strictObject({ handle: z.optional(handle), name, instructions, model: z.optional(model) });

/** `model: null` clears the agent's model (it answers with `AI_MODEL`). */
export const updateAgentBody = z
  .strictObject({ name: z.optional(name), instructions: z.optional(instructions), model: z.optional(z.nullable(model)) })
  .check(z.refine((patch) => Object.values(patch).some((value) => value !== undefined), 'name at least one field to change'));

/** Without `prompt` (or with a blank one) the agent replies to the conversation as it stands. */
export const invokeAgentBody = z.strictObject({
  roomId: idSchema,
  prompt: z.optional(z.string().check(z.maxLength(MAX_INVOKE_PROMPT_LENGTH))),
});
