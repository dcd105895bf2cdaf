import {
  AGENT_HANDLE_PATTERN,
  derivedHandle,
  derivedHandlePrefix,
  handleBaseOf,
  MAX_DERIVED_HANDLE_SUFFIX,
} from '#domain/ai/agent-handles';
import {
  askAi,
  conversation,
  isAiConfigured,
  type PromptMessage,
  refuseE2eRoom,
  requireAi,
  requireAllowedAgentModel,
} from '#domain/ai/assistant';
import { isHandoffActive, requireNoHandoff } from '#domain/ai/handoff-state';
import { mentionedUserIds } from '#domain/events/message-events';
import { onceFor } from '#domain/events/once';
import { enforceRouteGuards } from '#domain/guards/route-guards';
import { readMessages } from '#domain/messages/history';
import { sendMessage } from '#domain/messages/pipeline';
import { broadcastToRoom } from '#domain/realtime/broadcast';
import { accessRoom, ensureMember } from '#domain/rooms/rooms';
import { actorId, type Principal, type UserPrincipal } from '#shared/auth';
import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import {
  type AgentChanges,
  type AgentItem,
  agentItemFor,
  deleteAgentPart,
  findAgent,
  putAgentPart,
  queryAgents,
  updateAgentFields,
} from '#shared/db/agent';
import { claimAgentHandlePart, claimedAgentHandles, releaseAgentHandlePart } from '#shared/db/agent-handle';
import { findMembership } from '#shared/db/membership';
import type { Message } from '#shared/db/message';
import type { RoomItem } from '#shared/db/room';
import { isConditionFailure, transactWrite } from '#shared/db/transact';
import { ConflictError, HttpError, NotFoundError, RateLimitedError, RoomNotFoundError } from '#shared/errors';
import type { DomainEvent } from '#shared/events';
import { AGENT_USER_PREFIX, isAgentUserId, newId } from '#shared/ids';
import { logger } from '#shared/logger';
import { httpRoute } from '#wiring';

/**
 * In-room AI agents. An agent is a named set of instructions (and optionally a model) that speaks
 * in rooms as the user `agent:<handle>`: `POST /agents/{agentId}/invoke` and an `@agent:<handle>`
 * mention in a message make it answer. Either way the same path runs ({@link answerInRoom}):
 * `agentTyping` frames while the model works, then the reply through the one message pipeline as
 * the agent's user, so it is stored, broadcast and announced like any message. Nothing answers
 * while a human has taken the room over (handoff).
 *
 * The agent (`#shared/db/agent`) and its handle's claim (`#shared/db/agent-handle`) are written in
 * one transaction, conditionally, so a handle is unique per project.
 */

export const agentUserId = (handle: string) => `${AGENT_USER_PREFIX}${handle}`;
/** Agents never wake agents: a message by one of them starts no mention invoke. */

export const MAX_AGENT_NAME_LENGTH = 80;
export const MAX_AGENT_INSTRUCTIONS_LENGTH = 4000;
export const MAX_AGENT_MODEL_LENGTH = 200;
export const MAX_INVOKE_PROMPT_LENGTH = 4000;
/** Recent messages an agent reads before it answers (then bounded in characters by `conversation`). */
export const AGENT_CONTEXT_MESSAGES = 20;
/** Clients drop a typing indicator that is not renewed; the agent renews it this often while the model works. */
export const TYPING_REFRESH_MS = 3000;
/**
 * A message created longer ago than this wakes no agent: a backdated import of old history (which
 * announces `message.created` too) must not make agents answer conversations long over. Longer than
 * the subscriber's retries (visibility timeout × receives) so a retried event still answers.
 */
export const MENTION_MAX_AGE_MS = 30 * 60_000;

export function toAgent(item: AgentItem) {
  return {
    id: item.agentId,
    handle: item.handle,
    userId: agentUserId(item.handle),
    name: item.name,
    instructions: item.instructions,
    model: item.model,
    createdAt: item.createdAt,
    updatedAt: item.updatedAt,
    createdBy: item.createdBy,
  };
}
export type Agent = ReturnType<typeof toAgent>;

export class AgentNotFoundError extends NotFoundError {
  constructor() {
    super('agent_not_found', 'Agent not found');
  }
}

/**
 * The project's agents as the mention subscriber reads them on every mention: one Query, kept per
 * instance for `CACHE_TTL_MS` (a change may take that long to reach another instance).
 */
const agentsCache = new TtlCache<Agent[]>(config.CACHE_TTL_MS);
const forgetAgents = (projectId: string) => agentsCache.delete(projectId);

async function cachedAgents(projectId: string): Promise<Agent[]> {
  const cached = agentsCache.get(projectId);
  if (cached) return cached;
  const agents = (await queryAgents(projectId, { consistent: false })).map(toAgent);
  agentsCache.set(projectId, agents);
  return agents;
}

/** `GET /agents`, by handle; read consistently so an agent just created is listed. */
export async function listAgents(projectId: string): Promise<Agent[]> {
  const agents = (await queryAgents(projectId, { consistent: true })).map(toAgent);
  return agents.sort((a, b) => a.handle.localeCompare(b.handle));
}

/** One agent of the project; another project's id is simply not found. */
export async function getAgent(projectId: string, agentId: string): Promise<Agent> {
  const item = await findAgent(projectId, agentId);
  if (!item) throw new AgentNotFoundError();
  return toAgent(item);
}

export interface CreateAgentInput {
  /** Derived from the name when absent ({@link createAgent}). */
  readonly handle?: string;
  readonly name: string;
  readonly instructions: string;
  readonly model?: string;
}

/** Write attempts a derived handle makes when concurrent creates take the candidates it found free. */
const DERIVED_HANDLE_ATTEMPTS = 5;

/**
 * `POST /agents`: the agent and its handle's claim in one transaction. An explicit handle that is
 * taken is a 409 `agent_handle_taken`. Without one, the handle is derived from the name
 * (`handleBaseOf`): the first of `base`, `base-2` ... `base-99` that no agent of the project
 * holds, found with one Query of the claims and then claimed conditionally, so a concurrent create
 * that took it first moves this one on to the next free candidate.
 */
export async function createAgent(principal: Principal, input: CreateAgentInput): Promise<Agent> {
  if (input.model !== undefined) requireAllowedAgentModel(input.model);
  const { projectId } = principal;
  const now = new Date().toISOString();
  const agentId = newId('agt');
  const agent = (handle: string): AgentItem =>
    agentItemFor(projectId, {
      agentId,
      handle,
      name: input.name,
      instructions: input.instructions,
      model: input.model ?? null,
      createdAt: now,
      updatedAt: now,
      createdBy: actorId(principal),
    });
  const created =
    input.handle === undefined
      ? await createWithDerivedHandle(projectId, input.name, agent)
      : await putAgent(projectId, agent(input.handle));
  if (!created && input.handle !== undefined) {
    throw new ConflictError('agent_handle_taken', `An agent of this project already has the handle ${input.handle}`);
  }
  if (!created) {
    throw new ConflictError(
      'agent_handle_taken',
      `The handles derived from this name (${handleBaseOf(input.name)}, -2 ... -${MAX_DERIVED_HANDLE_SUFFIX}) are taken; choose a handle`,
    );
  }
  forgetAgents(projectId);
  return toAgent(created);
}

/** The agent with its handle's claim; `undefined` when another agent of the project holds the handle. */
async function putAgent(projectId: string, item: AgentItem): Promise<AgentItem | undefined> {
  try {
    await transactWrite([putAgentPart(item), claimAgentHandlePart(projectId, item.handle, item.agentId, item.createdAt)]);
    return item;
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

async function createWithDerivedHandle(
  projectId: string,
  name: string,
  agent: (handle: string) => AgentItem,
): Promise<AgentItem | undefined> {
  const base = handleBaseOf(name);
  const taken = new Set(await claimedAgentHandles(projectId, derivedHandlePrefix(base)));
  let attempts = 0;
  for (let n = 1; n <= MAX_DERIVED_HANDLE_SUFFIX && attempts < DERIVED_HANDLE_ATTEMPTS; n++) {
    const handle = derivedHandle(base, n);
    if (taken.has(handle)) continue;
    attempts++;
    const created = await putAgent(projectId, agent(handle));
    if (created) return created;
  }
  return undefined;
}

export type AgentPatch = AgentChanges;

/** `PATCH /agents/{agentId}`: name, instructions and model; the handle (the agent's user id) never changes. */
export async function updateAgent(projectId: string, agentId: string, patch: AgentPatch): Promise<Agent> {
  if (typeof patch.model === 'string') requireAllowedAgentModel(patch.model);
  const updated = await updateAgentFields(projectId, agentId, patch, new Date().toISOString());
  if (!updated) throw new AgentNotFoundError();
  forgetAgents(projectId);
  return toAgent(updated);
}

/**
 * `DELETE /agents/{agentId}`: the agent and its handle's claim, so the handle is free again. Its
 * room memberships stay (its messages do too); an agent created later with the same handle speaks
 * as the same user.
 */
export async function deleteAgent(projectId: string, agentId: string): Promise<void> {
  const agent = await getAgent(projectId, agentId);
  try {
    await transactWrite([deleteAgentPart(projectId, agentId), releaseAgentHandlePart(projectId, agent.handle, agentId)]);
  } catch (error) {
    // Deleted by a concurrent request since it was read.
    if (isConditionFailure(error)) throw new AgentNotFoundError();
    throw error;
  } finally {
    forgetAgents(projectId);
  }
}

/**
 * `POST /agents/{agentId}/invoke`: the caller must be able to post in the room. 503 without AI,
 * 404 for an unknown agent, 409 `human_handoff_active` during a handoff; then the agent answers
 * ({@link answerInRoom}) and the stored message is returned.
 */
export async function invokeAgent(principal: UserPrincipal, agentId: string, input: { roomId: string; prompt?: string }): Promise<Message> {
  requireAi();
  const agent = await getAgent(principal.projectId, agentId);
  const { room } = await accessRoom(principal, input.roomId, { join: false });
  refuseE2eRoom(room);
  await requireNoHandoff(principal.projectId, input.roomId);
  const prompt = input.prompt?.trim();
  return answerInRoom(agent, room, {
    request: prompt
      ? `${principal.userId} asks you: ${prompt}`
      : `${principal.userId} asked you to take part: reply to the conversation as it stands.`,
  });
}

/**
 * The agent mention subscriber's work for one `message.created` event: every `@agent:<handle>`
 * of a known agent in a message not written by an agent makes that agent answer, with the
 * mentioning message as the last of its context. Silently nothing when AI is not configured, a
 * handoff is active (the message is stored; that is all) or no handle is known. At most once per
 * event. A quota (402), provider (502) or other client-side refusal is logged, not retried; an
 * unexpected error is thrown so SQS delivers the event again.
 *
 * @returns the agents' messages
 */
export async function answerMentions(event: DomainEvent<'message.created'>): Promise<Message[]> {
  const { projectId, payload } = event;
  if (isAgentUserId(payload.userId)) return [];
  const handles = mentionedUserIds(payload.content, payload.userId)
    .filter((userId) => isAgentUserId(userId))
    .map((userId) => userId.slice(AGENT_USER_PREFIX.length))
    .filter((handle) => AGENT_HANDLE_PATTERN.test(handle));
  if (handles.length === 0 || !isAiConfigured()) return [];
  if (Date.now() - Date.parse(payload.createdAt) > MENTION_MAX_AGE_MS) return [];
  const byHandle = new Map((await cachedAgents(projectId)).map((agent) => [agent.handle, agent]));
  const agents = handles.flatMap((handle) => byHandle.get(handle) ?? []).slice(0, config.AI_MAX_AGENTS_PER_MESSAGE);
  if (agents.length === 0) return [];
  if (await isHandoffActive(projectId, payload.roomId)) {
    logger.info('agent mention during a handoff: not answered', { projectId, roomId: payload.roomId, messageId: payload.messageId });
    return [];
  }
  const answers: Message[] = [];
  await onceFor('AgentMentions', event, async () => {
    // Read as the service (cached): the room's type decides how the agents join it.
    const room = await accessRoom({ kind: 'service', projectId }, payload.roomId, { join: false }).then(
      (access) => access.room,
      (error: unknown) => {
        // Deleted since the message was posted: nobody to answer.
        if (error instanceof RoomNotFoundError) return undefined;
        throw error;
      },
    );
    // An encrypted room's messages are ciphertext to the service: nothing for an agent to read.
    if (!room || room.e2eEnabled) return;
    const admitted = await withinAnswerBudget(projectId, payload.userId, agents);
    if (admitted.length < agents.length) {
      logger.info('agent mentions past the author’s budget: not answered', {
        projectId,
        roomId: payload.roomId,
        messageId: payload.messageId,
        skipped: agents.slice(admitted.length).map((agent) => agent.id),
      });
    }
    // Side by side, so several agents take no longer than the slowest within the subscriber's timeout.
    const outcomes = await Promise.allSettled(
      admitted.map((agent) =>
        answerInRoom(agent, room, {
          request: `${payload.userId} mentioned you in message [${payload.messageId}] (the last one above): answer it.`,
          upToMessageId: payload.messageId,
          // A redelivery that got past the claim (its lease ran out) finds this message instead of writing a second.
          clientMessageId: `${agent.userId}:${event.id}`,
        }),
      ),
    );
    for (const [index, outcome] of outcomes.entries()) {
      if (outcome.status === 'fulfilled') {
        answers.push(outcome.value);
        continue;
      }
      const error = outcome.reason;
      // A refusal (402 quota, 409 handoff, 429) or a provider failure (502) would only repeat: logged, not retried.
      if (!(error instanceof HttpError) || (error.statusCode >= 500 && error.statusCode !== 502)) throw error;
      logger.warn('agent mention not answered', {
        projectId,
        roomId: payload.roomId,
        messageId: payload.messageId,
        agentId: admitted[index]?.id,
        code: error.code,
        status: error.statusCode,
      });
    }
  });
  return answers;
}

/**
 * The agents, in order, that the author's budget of agent answers (`InvokeAgent`'s rate limit, which
 * invokes spend too) still pays for: one answer each. Mentions would otherwise buy model calls at
 * the pace of the message rate limit.
 */
async function withinAnswerBudget(projectId: string, userId: string, agents: readonly Agent[]): Promise<Agent[]> {
  const { rateLimit } = httpRoute('InvokeAgent');
  const admitted: Agent[] = [];
  for (const agent of agents) {
    try {
      await enforceRouteGuards({ rateLimit }, { projectId, userId });
    } catch (error) {
      if (error instanceof RateLimitedError) break;
      throw error;
    }
    admitted.push(agent);
  }
  return admitted;
}

interface AnswerRequest {
  /** What the agent is asked to do, after the conversation. */
  readonly request: string;
  /** The context ends at this message (a mention); the room's latest messages otherwise. */
  readonly upToMessageId?: number;
  readonly clientMessageId?: string;
}

/**
 * The one answer path of invoke and mention: `agentTyping` (renewed every {@link TYPING_REFRESH_MS}
 * while the model works), the prompt from the agent's instructions and the room's recent messages
 * (bounded by `conversation`), the model's reply posted through the message pipeline as the
 * agent's user (made a member of the room first), and `agentTyping` with `typing: false` however
 * it ended. A handoff that began while the model worked wins: the reply is dropped (409).
 */
async function answerInRoom(agent: Agent, room: RoomItem, ask: AnswerRequest): Promise<Message> {
  const { projectId, roomId } = room;
  const announce = (typing: boolean) =>
    broadcastToRoom(projectId, roomId, { type: 'agentTyping', roomId, agentId: agent.id, userId: agent.userId, typing }).catch((error) =>
      logger.error('agentTyping broadcast failed', { error: error as Error, roomId, agentId: agent.id }),
    );
  await announce(true);
  let renewing: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    renewing = announce(true);
  }, TYPING_REFRESH_MS);
  try {
    // Before the model is paid: a dm the agent is not in refuses it here.
    await seatAgent(agent, room);
    const { messages } = await readMessages(projectId, roomId, {
      limit: AGENT_CONTEXT_MESSAGES,
      consistent: true,
      ...(ask.upToMessageId === undefined ? {} : { before: ask.upToMessageId + 1 }),
    });
    const answer = await askAi(projectId, 'agent', agentPrompt(agent, messages, ask.request), { model: agent.model ?? undefined });
    clearInterval(timer);
    // A renewal still on its way must not land after the agent's message.
    await renewing;
    const content = answer.content.slice(0, config.MESSAGE_MAX_LENGTH);
    if (!content) throw new HttpError(502, 'ai_bad_response', 'The AI provider answered no text');
    await requireNoHandoff(projectId, roomId);
    const principal: UserPrincipal = { kind: 'user', projectId, userId: agent.userId, roles: ['member'] };
    const { message } = await sendMessage(
      principal,
      { roomId, content, ...(ask.clientMessageId ? { clientMessageId: ask.clientMessageId } : {}) },
      { source: 'agent' },
    );
    return message;
  } finally {
    clearInterval(timer);
    // Nor after the indicator is switched off.
    await renewing;
    await announce(false);
  }
}

function agentPrompt(agent: Agent, messages: readonly PromptMessage[], request: string) {
  return [
    {
      role: 'system' as const,
      content:
        `You are ${agent.name}, an AI agent in a chat room, where you appear as ${agent.userId} and people mention you as @${agent.userId}. ` +
        'Answer with the text of one chat message only, without a name or prefix. Your instructions:\n' +
        agent.instructions,
    },
    {
      role: 'user' as const,
      content: `Recent messages of the room (oldest first, as "[id] user: text"):\n${conversation(messages)}\n\n${request}`,
    },
  ];
}

/**
 * The pipeline takes messages from members only, so the agent joins the room before it speaks. A
 * dm has exactly its two members: an agent answers there only when it is one of them.
 */
async function seatAgent(agent: Agent, room: RoomItem): Promise<void> {
  if (room.type === 'dm') {
    const membership = await findMembership(room.projectId, room.roomId, agent.userId, { consistent: true });
    if (!membership) throw new ConflictError('dm_membership_fixed', 'An agent answers in a dm only when it is one of its two members');
    return;
  }
  await ensureMember(room.projectId, room.roomId, agent.userId, 'member');
}
