import { getAgent } from '#domain/ai/agents';
import { askAi, bulletLines, conversation, isAiConfigured, type PromptMessage } from '#domain/ai/assistant';
import { listDispositions, requireKnownDisposition } from '#domain/ai/dispositions';
import { newEvent, outboxPut } from '#domain/events/outbox';
import { readMessages } from '#domain/messages/history';
import { broadcastToRoom } from '#domain/realtime/broadcast';
import { accessRoom } from '#domain/rooms/rooms';
import { actorId, hasRole, type Principal } from '#shared/auth';
import { handoffTaskItem, putAgentTaskPart, resolveAgentTaskPart } from '#shared/db/agent-task';
import { type ContextSource, completeHandoffPart, findHandoff, type HandoffItem, handoffItemFor, takeOverPart } from '#shared/db/handoff';
import { isConditionFailure, transactWrite } from '#shared/db/transact';
import { ConflictError, ForbiddenError } from '#shared/errors';
import { newId } from '#shared/ids';
import { logger } from '#shared/logger';

/**
 * Human handoff, the spec's state table: no handoff → `human_active` (`POST`), `human_active` →
 * `completed` (`PATCH` with a disposition code), and a new `POST` after completion starts a new
 * handoff. One item per room holds the current (or last) handoff; its `state` is what every AI
 * answer in the room checks (`#domain/ai/handoff-state`). Each transition writes the handoff, its
 * agent task (and on take-over the `handoff` event) in one transaction, then tells the room's
 * sockets with a `handoff` frame.
 */

/** The spec's Limits row "Handoff context". */
export const HANDOFF_CONTEXT_MESSAGES = 12;
export const MAX_HANDOFF_NOTE_LENGTH = 2000;

export function toHandoff(item: HandoffItem) {
  const { pk: _pk, sk: _sk, projectId: _projectId, ...handoff } = item;
  return handoff;
}
export type Handoff = ReturnType<typeof toHandoff>;

/**
 * What a room's members read of its handoff: the fields its `handoff` frames carry. Frames go to
 * every connection of the room, customers included, and so does this view: the moderator's note,
 * the completion note and the context summary (which quotes the room's messages to staff) stay
 * with moderators and above and the API key.
 */
export function toMemberHandoff(item: HandoffItem) {
  const { roomId, state, handoffId, agent_task_id, agentId, takenBy, disposition } = item;
  return { roomId, state, handoffId, agent_task_id, agentId, takenBy, disposition };
}
export type MemberHandoff = ReturnType<typeof toMemberHandoff>;

/** `GET`: the record (redacted for members), or `{ state: 'none' }` for a room that never had a handoff. */
export type HandoffView = Handoff | MemberHandoff | { readonly state: 'none' };

/**
 * Members of the room (not its guests), and project moderators and above who may read the room;
 * others get what `accessRoom` gives (404 for a room they cannot see, 403 otherwise).
 */
async function requireHandoffReader(principal: Principal, roomId: string): Promise<void> {
  const { membership } = await accessRoom(principal, roomId, { join: false });
  if (hasRole(principal, 'moderator')) return;
  if (!membership) throw new ForbiddenError('You are not a member of this room', 'not_a_member');
  if (membership.role === 'guest') throw new ForbiddenError("A room's guests may not read its handoff");
}

/**
 * The room as its history's readers reach it (`accessRoom`, as `GET /rooms/{roomId}/messages`
 * does): public rooms, and private ones to their members and the project's admins. A handoff holds
 * the room's last messages, so a moderator outside a private room is refused here as everywhere else.
 */
const readableRoom = async (principal: Principal, roomId: string) => (await accessRoom(principal, roomId, { join: false })).room;

export async function getHandoff(principal: Principal, roomId: string): Promise<HandoffView> {
  await requireHandoffReader(principal, roomId);
  const item = await findHandoff(principal.projectId, roomId);
  if (!item) return { state: 'none' };
  return hasRole(principal, 'moderator') ? toHandoff(item) : toMemberHandoff(item);
}

/**
 * What the human taking over reads first: the AI's summary of the last 12 messages when AI is
 * configured, else (or when the AI call fails for any reason, its quota included) the messages
 * themselves as bounded prompt lines. A handoff never depends on AI.
 */
async function handoffContext(
  projectId: string,
  messages: readonly PromptMessage[],
  room: { readonly e2eEnabled: boolean },
): Promise<{ contextSummary: string; contextSource: ContextSource }> {
  const excerpt = conversation(messages);
  // An encrypted room's messages are ciphertext to the service: they never go to a provider.
  if (messages.length === 0 || room.e2eEnabled || !isAiConfigured()) return { contextSummary: excerpt, contextSource: 'excerpt' };
  try {
    const answer = await askAi(projectId, 'handoff_summary', [
      {
        role: 'system',
        content:
          'A human support agent is taking this chat room over from AI. Brief them in 2 to 8 short bullet lines starting ' +
          'with "- ": what the people want, what was already answered or tried, what is still open. Use only what the messages say.',
      },
      { role: 'user', content: `The last ${messages.length} messages (oldest first):\n${excerpt}` },
    ]);
    const summary = bulletLines(answer.content);
    if (summary) return { contextSummary: summary, contextSource: 'ai' };
  } catch (error) {
    logger.warn('handoff.context_fallback', { projectId, error: error as Error });
  }
  return { contextSummary: excerpt, contextSource: 'excerpt' };
}

const handoffActive = () => new ConflictError('handoff_active', 'A human has already taken this room over; complete that handoff first');
const noActiveHandoff = () => new ConflictError('no_active_handoff', 'This room has no active handoff to complete');

/** The frame is a courtesy to connected clients: the transition is stored, so a failed post is logged, not thrown. */
async function tellRoom(projectId: string, roomId: string, frame: Record<string, unknown>): Promise<void> {
  try {
    await broadcastToRoom(projectId, roomId, frame);
  } catch (error) {
    logger.error('handoff.broadcast_failed', { projectId, roomId, error: error as Error });
  }
}

/**
 * `POST /rooms/{roomId}/handoff` (moderators and above, minRole of the route, who may read the
 * room: a private one takes a membership or the admin role, as its history does): the room goes
 * `human_active` with its context summary, a task claimed by `agentId` (or the caller), and the
 * `handoff` event, in one transaction conditional on no active handoff (`409 handoff_active`).
 */
export async function startHandoff(principal: Principal, roomId: string, input: { agentId?: string; note?: string }): Promise<Handoff> {
  const projectId = principal.projectId;
  const [room, current, { messages }] = await Promise.all([
    readableRoom(principal, roomId),
    findHandoff(projectId, roomId),
    readMessages(projectId, roomId, { limit: HANDOFF_CONTEXT_MESSAGES, consistent: true }),
    // The task is claimed by this agent: it must be one of the project's (404 agent_not_found).
    input.agentId === undefined ? undefined : getAgent(projectId, input.agentId),
  ]);
  // Checked here too so a take-over that cannot succeed spends no AI call; the transaction decides.
  if (current?.state === 'human_active') throw handoffActive();

  const context = await handoffContext(projectId, messages, room);
  const takenBy = actorId(principal);
  const takenAt = new Date().toISOString();
  const handoffId = newId('hof');
  const taskId = newId('task');
  const agentId = input.agentId ?? null;
  const note = input.note ?? null;
  const item = handoffItemFor({
    projectId,
    roomId,
    handoffId,
    state: 'human_active' as const,
    agent_task_id: taskId,
    agentId,
    note,
    takenBy,
    takenAt,
    ...context,
    completedAt: null,
    completedBy: null,
    disposition: null,
    completionNote: null,
  });
  const task = handoffTaskItem(projectId, { taskId, roomId, handoffId, claimedBy: agentId ?? takenBy, note, createdAt: takenAt });
  const event = newEvent('handoff', projectId, {
    roomId,
    handoffId,
    state: 'human_active',
    agentTaskId: taskId,
    agentId,
    takenBy,
    note,
    ...context,
  });
  try {
    await transactWrite([takeOverPart(item), putAgentTaskPart(task), outboxPut(event)]);
  } catch (error) {
    // Another take-over of the room won the race.
    if (isConditionFailure(error)) throw handoffActive();
    throw error;
  }
  await tellRoom(projectId, roomId, { type: 'handoff', roomId, state: 'human_active', handoffId, agentTaskId: taskId, agentId, takenBy });
  return toHandoff(item);
}

/**
 * `PATCH /rooms/{roomId}/handoff` (moderators and above): `409 no_active_handoff` unless a human
 * has the room, `400 unknown_disposition` for a code the project does not have; otherwise the
 * handoff is `completed`, its task `resolved` and the `handoff` event (state `completed`) written
 * in one transaction, and AI may answer again.
 */
export async function completeHandoff(
  principal: Principal,
  roomId: string,
  input: { disposition: string; note?: string },
): Promise<Handoff> {
  const projectId = principal.projectId;
  const [, current, dispositions] = await Promise.all([
    readableRoom(principal, roomId),
    findHandoff(projectId, roomId),
    listDispositions(projectId),
  ]);
  if (current?.state !== 'human_active') throw noActiveHandoff();
  requireKnownDisposition(dispositions, input.disposition);

  const completedAt = new Date().toISOString();
  const completedBy = actorId(principal);
  const completionNote = input.note ?? null;
  // Subscribers hear of the completion too (the support desk asks the room's customers for their satisfaction).
  const event = newEvent('handoff', projectId, {
    roomId,
    handoffId: current.handoffId,
    state: 'completed',
    agentTaskId: current.agent_task_id,
    agentId: current.agentId,
    takenBy: current.takenBy,
    note: current.note,
    contextSummary: current.contextSummary,
    contextSource: current.contextSource,
    completedBy,
    disposition: input.disposition,
  });
  try {
    await transactWrite([
      outboxPut(event),
      // The handoff that was read, still active: a concurrent completion (or a new take-over) wins.
      completeHandoffPart(projectId, roomId, current.handoffId, {
        completedAt,
        completedBy,
        disposition: input.disposition,
        completionNote,
      }),
      resolveAgentTaskPart(projectId, current.agent_task_id, {
        resolvedAt: completedAt,
        resolvedBy: completedBy,
        disposition: input.disposition,
        note: completionNote,
      }),
    ]);
  } catch (error) {
    if (isConditionFailure(error)) throw noActiveHandoff();
    throw error;
  }
  const completed: HandoffItem = {
    ...current,
    state: 'completed',
    completedAt,
    completedBy,
    disposition: input.disposition,
    completionNote,
  };
  await tellRoom(projectId, roomId, {
    type: 'handoff',
    roomId,
    state: 'completed',
    handoffId: current.handoffId,
    disposition: input.disposition,
  });
  return toHandoff(completed);
}
