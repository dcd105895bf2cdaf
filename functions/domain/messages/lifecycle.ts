import { newEvent, outboxPut } from '#domain/events/outbox';
import { findBlockedTerm, recordAutoFlag } from '#domain/moderation/block-list';
import { accessRoom } from '#domain/rooms/rooms';
import { actorId, type Principal } from '#shared/auth';
import { editMessagePart, findMessage, type Message, type MessageItem, toMessage, tombstoneMessagePart } from '#shared/db/message';
import { deletePinPart } from '#shared/db/pin';
import { isConditionFailure, transactWrite } from '#shared/db/transact';
import { ConflictError, ForbiddenError, MessageNotFoundError } from '#shared/errors';
import { canModerateRoom } from './room-moderation';

/** Tries of an edit that met a concurrent edit of the same message between its read and its write. */
const EDIT_ATTEMPTS = 3;

const isGone = (item: MessageItem) => item.deletedAt !== undefined || item.erasedAt !== undefined;

/** The message, strongly consistent (the write that follows is conditional on exactly this version). */
export async function requireLiveMessage(projectId: string, roomId: string, messageId: number, consistent = true): Promise<MessageItem> {
  const item = await findMessage(projectId, roomId, messageId, { consistent });
  if (!item) throw new MessageNotFoundError();
  if (isGone(item)) throw new ConflictError('message_deleted', 'The message was deleted');
  return item;
}

/**
 * `PATCH /messages/{messageId}`: the author replaces the content. The new content passes the send
 * path's checks (the schema's length, the block list, which labels it `auto_flag` and records the
 * flag as a new message does); the message keeps `editedAt` and its edit count. Two requests: the
 * read of the message and one transaction writing the edit with its `message.updated` event.
 */
export async function editMessage(
  principal: Principal & { kind: 'user' },
  roomId: string,
  messageId: number,
  content: string,
): Promise<Message> {
  const { projectId } = principal;
  await accessRoom(principal, roomId, { join: false });
  const matchedTerm = await findBlockedTerm(projectId, content);
  const moderation = matchedTerm ? { label: 'auto_flag' as const, reason: `block_list:${matchedTerm}` } : null;
  for (let attempt = 1; ; attempt++) {
    const item = await findMessage(projectId, roomId, messageId, { consistent: true });
    if (!item) throw new MessageNotFoundError();
    if (item.userId !== principal.userId) throw new ForbiddenError('Only the author may edit a message', 'not_message_author');
    if (isGone(item)) throw new ConflictError('message_deleted', 'The message was deleted');
    const editedAt = new Date().toISOString();
    const edited: MessageItem = { ...item, content, moderation, editedAt, editCount: (item.editCount ?? 0) + 1 };
    const event = newEvent('message.updated', projectId, {
      roomId,
      messageId,
      change: 'edited',
      userId: principal.userId,
      at: editedAt,
      content,
      editedAt,
      editCount: edited.editCount,
    });
    try {
      await transactWrite([editMessagePart(item, { content, moderation, editedAt }), outboxPut(event)]);
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      if (attempt === EDIT_ATTEMPTS) throw new ConflictError('message_changed', 'The message kept changing during the edit; try again');
      continue;
    }
    if (matchedTerm && moderation) {
      await recordAutoFlag({ projectId, roomId, messageId, userId: item.userId, reason: moderation.reason, matchedTerm });
    }
    return toMessage(edited);
  }
}

/**
 * `DELETE /messages/{messageId}?roomId=`: the author, the room's owner, a project moderator or the
 * API key leaves a tombstone (content and attachments gone, `deletedAt` set, the pin dropped; id,
 * author, parent and thread place stay, so replies keep their parent). Deleting a tombstone is a
 * no-op (`false`), so a repeated delete answers the same.
 */
export async function deleteMessage(principal: Principal, roomId: string, messageId: number): Promise<boolean> {
  const { projectId } = principal;
  const access = await accessRoom(principal, roomId, { join: false });
  const item = await findMessage(projectId, roomId, messageId, { consistent: true });
  if (!item) throw new MessageNotFoundError();
  const isAuthor = principal.kind === 'user' && item.userId === principal.userId;
  if (!isAuthor && !canModerateRoom(principal, access)) {
    throw new ForbiddenError("Only the author, the room's owner or a moderator may delete a message", 'not_message_author');
  }
  if (isGone(item)) return false;
  const deletedAt = new Date().toISOString();
  const event = newEvent('message.updated', projectId, {
    roomId,
    messageId,
    change: 'deleted',
    userId: actorId(principal),
    at: deletedAt,
    content: '',
    deletedAt,
    pinned: false,
  });
  try {
    await transactWrite([
      tombstoneMessagePart(projectId, roomId, messageId, deletedAt, actorId(principal)),
      deletePinPart(projectId, roomId, messageId),
      outboxPut(event),
    ]);
    return true;
  } catch (error) {
    // Deleted meanwhile by another request, which announced it.
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
