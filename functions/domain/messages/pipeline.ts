import { roomFlagsOf } from '#domain/events/message-attributes';
import { findBlockedTerm, recordAutoFlag } from '#domain/moderation/block-list';
import { consumeRateLimit } from '#domain/rate-limit/rate-limit';
import { broadcastToRoom } from '#domain/realtime/broadcast';
import { accessRoom, joinPublicRoom, joinsOnSend } from '#domain/rooms/rooms';
import { isProjectAdmin, type Principal } from '#shared/auth';
import { config, type RateLimitKey } from '#shared/config';
import {
  type ClientMessageReservation,
  findClientMessageReservation,
  findMessage,
  type Message,
  type MessageItem,
  messageKey,
  type NewMessageRefusal,
  putNewMessage,
  type ThreadPlacement,
  threadPlacement,
  toMessage,
  type VoiceFields,
  writeNewMessage,
} from '#shared/db/message';
import { BadRequestError, ForbiddenError, MessageNotFoundError } from '#shared/errors';
import { refuseReservedId } from '#shared/ids';
import { logger } from '#shared/logger';
import { createdAtMsOf, messageIdFor, nextSlot } from './message-ids';
import type { MessageInput } from './message-input';

/**
 * Where a message came from; imports skip the sender rate limit and do not need room membership.
 * An agent's answer (`agent`) skips the sender limit too: it comes after the AI call was paid for,
 * and a 429 then would throw the answer away; what an agent may spend is bounded by the quota.
 */
export type MessageSource = 'api' | 'websocket' | 'import' | 'agent' | 'bridge';

export interface SendContext {
  readonly source: MessageSource;
  readonly sourceIp?: string;
  /** The sender's own WebSocket connection, which gets an ack instead of the broadcast. */
  readonly connectionId?: string;
  /** A voice message's fields (`POST /messages/voice`), stored with it. */
  readonly voice?: VoiceFields;
  /**
   * The bridge a message from Slack, Discord or Matrix came in through (source `bridge`, sent with
   * the API key's rights as the platform user): the relay sends it to the room's other bridges only.
   */
  readonly viaBridge?: string;
}

export interface SendResult {
  readonly message: Message;
  /** False when `clientMessageId` matched an earlier message: nothing was written. */
  readonly created: boolean;
}

const MAX_ID_COLLISIONS = 20;

/**
 * The one message pipeline: validate → authorize → rate limit → moderation → persist (idempotent
 * on `clientMessageId`) → broadcast. Every entry point calls this. The stored message is its own
 * domain event: the table stream carries it to the event publisher (`message.created`, mentions,
 * `moderation.auto_flag`), so the sender waits for no queue and a stored message is always announced.
 */
export async function sendMessage(principal: Principal, input: MessageInput, context: SendContext): Promise<SendResult> {
  const projectId = principal.projectId;
  // Agents and bridges key their messages in prefixes of their own, which no client may take first.
  if (input.clientMessageId !== undefined && context.source !== 'agent' && context.source !== 'bridge') {
    refuseReservedId('clientMessage', input.clientMessageId, 'body.clientMessageId');
  }
  const impersonates = input.userId !== undefined && !(principal.kind === 'user' && input.userId === principal.userId);
  if ((impersonates || input.createdAt !== undefined) && !isProjectAdmin(principal)) {
    throw new ForbiddenError('Only an admin token or the API key may set userId or createdAt', 'backdating_forbidden');
  }
  const authorId = input.userId ?? (principal.kind === 'user' ? principal.userId : undefined);
  if (!authorId)
    throw new BadRequestError('userId is required when sending with the API key', [{ field: 'body.userId', message: 'required' }]);

  // Imports speak for someone else, so the importer's membership is what matters, not the author's.
  // A public room is joined below, once nothing can refuse the message.
  const access = await accessRoom(principal, input.roomId, { join: false });

  // A bridged platform's people are held to the sender limit as users are, by their platform user id.
  const limitedSender = context.source === 'bridge' ? authorId : principal.kind === 'user' ? principal.userId : undefined;
  if (limitedSender !== undefined && context.source !== 'import' && context.source !== 'agent') {
    await consumeRateLimit(
      projectId,
      'messages',
      rateLimitKeys(limitedSender, input.roomId, context.sourceIp),
      config.RATE_LIMIT_MESSAGES_PER_MINUTE,
    );
  }

  // A reply's parent is read only when the send would join the room first, so that a missing parent
  // still joins no one; otherwise the write itself asserts the parent (see `writeMessage`).
  const parent =
    input.parent_id != null && context.source !== 'import' && joinsOnSend(principal, access)
      ? await requireMessage(projectId, input.roomId, input.parent_id)
      : undefined;
  if (context.source !== 'import') await joinPublicRoom(principal, access);
  // As cached (up to CACHE_TTL_MS): a room turning hot or cool is seen that much later (docs/architecture.md, "Hot rooms").
  const coalesced = (access.room.coalesceUntil ?? 0) > Date.now();
  return persistAndAnnounce(principal, input, authorId, context, parent, roomFlagsOf(access.room), coalesced);
}

function rateLimitKeys(userId: string, roomId: string, sourceIp: string | undefined): string[] {
  const value: Record<RateLimitKey, string> = {
    user: `user:${userId}`,
    room: `room:${roomId}`,
    tenant: 'tenant',
    ip: `ip:${sourceIp ?? 'unknown'}`,
  };
  return config.RATE_LIMIT_MESSAGE_KEYS.map((key) => value[key]);
}

/** A parent only needs to exist, so an eventually consistent read (half the cost) is enough. */
async function requireMessage(projectId: string, roomId: string, messageId: number): Promise<MessageItem> {
  const message = await findMessage(projectId, roomId, messageId, { consistent: false });
  if (!message) throw new MessageNotFoundError();
  return message;
}

/**
 * A previous use of `clientMessageId`: its message, or only its reservation when that attempt died
 * (or is still running) between reserving the id and writing the message.
 */
async function findByClientMessageId(projectId: string, roomId: string, clientMessageId: string) {
  const reserved = await findClientMessageReservation(projectId, roomId, clientMessageId);
  if (!reserved) return undefined;
  const message = await findMessage(projectId, roomId, reserved.id, { consistent: true });
  return { reserved, message: message?.clientMessageId === clientMessageId ? toMessage(message) : undefined };
}

async function persistAndAnnounce(
  principal: Principal,
  input: MessageInput,
  authorId: string,
  context: SendContext,
  parent: MessageItem | undefined,
  roomFlags: ReturnType<typeof roomFlagsOf>,
  coalesced: boolean,
): Promise<SendResult> {
  const projectId = principal.projectId;
  const createdAt = input.createdAt ? new Date(input.createdAt).toISOString() : new Date().toISOString();
  const matchedTerm = await findBlockedTerm(projectId, input.content);
  const moderation = matchedTerm ? { label: 'auto_flag' as const, reason: `block_list:${matchedTerm}` } : null;
  const base: MessageBase = {
    projectId,
    roomId: input.roomId,
    userId: authorId,
    content: input.content,
    parent_id: input.parent_id ?? null,
    attachments: input.attachments ?? [],
    clientMessageId: input.clientMessageId ?? null,
    createdAt,
    moderation,
    ...(context.voice ? { voice: context.voice } : {}),
    ...(input.parent_id != null ? threadFields(parent ? threadPlacement(parent) : rootGuess(input.parent_id)) : {}),
    // Known from the room read above (cached up to CACHE_TTL_MS): a bridge, the first push target or
    // watcher of a room may miss that long of its messages (docs/architecture.md, "Events between areas").
    ...roomFlags,
    ...(context.viaBridge ? { viaBridge: context.viaBridge } : {}),
    ...(coalesced ? { delivery: 'coalesced' as const, ...(context.connectionId ? { senderConnectionId: context.connectionId } : {}) } : {}),
  };

  const live = input.createdAt === undefined;
  const outcome = await writeMessage(base, live, parent ? undefined : (input.parent_id ?? undefined));
  if ('duplicate' in outcome) return { message: outcome.duplicate, created: false };
  const message = toMessage(outcome.item);

  // The connection list is read only after the message is stored: a client that connects
  // meanwhile either is in the list or finds the message in its history replay.
  await Promise.all([
    matchedTerm && moderation
      ? recordAutoFlag({
          projectId,
          roomId: message.roomId,
          messageId: message.id,
          userId: authorId,
          reason: moderation.reason,
          matchedTerm,
        })
      : undefined,
    // A coalesced room's messages are posted by the RoomDelivery stream consumer: no connection read here.
    coalesced
      ? undefined
      : broadcastToRoom(projectId, message.roomId, { type: 'message', message }, { excludeConnectionId: context.connectionId }).catch(
          (error) => logger.error('broadcast failed', { error: error as Error, roomId: message.roomId }),
        ),
  ]);
  return { message, created: true };
}

type MessageBase = Omit<MessageItem, 'pk' | 'sk' | 'id'>;

const threadFields = (thread: ThreadPlacement) => ({ thread_root: thread.root, thread_depth: thread.depth, thread_path: thread.path });

/** A reply's placement when its parent is a thread root, as most are: the guess the write asserts. */
const rootGuess = (parentId: number): ThreadPlacement => ({ root: parentId, depth: 1, path: '' });

/**
 * Writes the message under a fresh id, moving to the next slot while the id is taken, in one request
 * when nothing refuses it. With a `clientMessageId` the guard goes in the same transaction, so a
 * repeated or concurrent request finds the original (its guard's id) instead of writing a second
 * message. A reply whose parent was not read (`rootParentId`) carries the placement under a thread
 * root and asserts it in the same transaction; when the parent is a reply itself, the refusal
 * returns it and the next write takes its real placement (one more request).
 */
async function writeMessage(
  base: MessageBase,
  live: boolean,
  rootParentId: number | undefined,
): Promise<{ item: MessageItem } | { duplicate: Message }> {
  let id = messageIdFor(`${base.projectId}|${base.roomId}`, Date.parse(base.createdAt), live);
  let message = base;
  let unverifiedParent = rootParentId;
  for (let collisions = 0; ; ) {
    const item = messageAt(message, id);
    const refusal = await writeNewMessage(item, { guarded: message.clientMessageId !== null, rootParentId: unverifiedParent });
    if (!refusal) return { item };
    if (refusal.guard && message.clientMessageId !== null) {
      return resumeEarlierAttempt(message, message.clientMessageId, { ...refusal, guard: refusal.guard });
    }
    if (!refusal.parent && !refusal.idTaken) throw new Error('The message write was refused for no reason it names');
    message = placedBy(message, refusal);
    if (refusal.parent) unverifiedParent = undefined;
    if (refusal.idTaken) {
      if (++collisions > MAX_ID_COLLISIONS) throw idsExhausted();
      id = nextSlot(id);
    }
  }
}

/** The message placed as the refusal found its parent: under the parent's thread when it is a reply; a missing parent is a 404. */
function placedBy(message: MessageBase, refusal: NewMessageRefusal): MessageBase {
  if (refusal.parent === 'missing') throw new MessageNotFoundError();
  return refusal.parent ? { ...message, ...threadFields(threadPlacement(refusal.parent)) } : message;
}

const idsExhausted = () => new Error(`No free message id after ${MAX_ID_COLLISIONS + 1} tries`);

/**
 * The `clientMessageId` was used before (its guard, in `refusal`, reserved the id and time). Return that message;
 * a guard without its message is one an earlier release wrote before its message and never
 * finished (or is still finishing): write the message under the id and time it reserved, and
 * whichever write lands first wins while the other reports a duplicate.
 */
async function resumeEarlierAttempt(
  base: MessageBase,
  clientMessageId: string,
  refusal: NewMessageRefusal & { guard: ClientMessageReservation },
): Promise<{ item: MessageItem } | { duplicate: Message }> {
  const reserved = refusal.guard;
  const earlier = await findMessage(base.projectId, base.roomId, reserved.id, { consistent: true });
  if (earlier?.clientMessageId === clientMessageId) return { duplicate: toMessage(earlier) };
  const item = await putMessage({ ...placedBy(base, refusal), createdAt: reserved.createdAt }, reserved.id);
  if (item) return { item };
  const finished = await findByClientMessageId(base.projectId, base.roomId, clientMessageId);
  if (finished?.message) return { duplicate: finished.message };
  throw new Error(`The id reserved for clientMessageId ${clientMessageId} holds another message`);
}

function messageAt(base: MessageBase, id: number): MessageItem {
  if (createdAtMsOf(id) < 0) throw new BadRequestError('createdAt is out of range');
  return { ...messageKey(base.projectId, base.roomId, id), id, ...base };
}

/** Stores the message under `id`, or answers `undefined` when that id is taken. */
async function putMessage(base: MessageBase, id: number): Promise<MessageItem | undefined> {
  const item = messageAt(base, id);
  return (await putNewMessage(item)) ? item : undefined;
}
