import { newEvent, outboxPut } from '#domain/events/outbox';
import { accessRoom, type RoomAccess } from '#domain/rooms/rooms';
import { actorId, type Principal } from '#shared/auth';
import { findMessage, findMessages, type Message, pinMessagePart, toMessage, unpinMessagePart } from '#shared/db/message';
import { deletePinPart, putPinPart, roomPins } from '#shared/db/pin';
import { isConditionFailure, transactWrite } from '#shared/db/transact';
import { ForbiddenError, MessageNotFoundError } from '#shared/errors';
import { requireLiveMessage } from './lifecycle';
import { canModerateRoom } from './room-moderation';

/** Pins listed by `GET /rooms/{roomId}/pins`: a room's pins are a short list, read whole. */
export const MAX_LISTED_PINS = 100;

export interface PinResult {
  readonly roomId: string;
  readonly messageId: number;
  readonly pinned: boolean;
  /** False when the message was pinned (or unpinned) already. */
  readonly changed: boolean;
}

/**
 * How the pin was asked for: `rest` (`POST /rooms/{roomId}/pins/{messageId}`) is the moderators';
 * `command` (the `/pin` slash command) is also the members' in a room with `allowMemberPins`.
 */
export type PinSource = 'rest' | 'command';

function mayPin(principal: Principal, access: RoomAccess, source: PinSource): boolean {
  if (canModerateRoom(principal, access)) return true;
  const role = access.membership?.role;
  return source === 'command' && access.room.allowMemberPins === true && (role === 'member' || role === 'owner');
}

const pinForbidden = (source: PinSource) =>
  new ForbiddenError(
    source === 'command'
      ? "Only the room's owner or a moderator may pin here: members may pin with /pin only in a room with allowMemberPins"
      : "Only the room's owner or a moderator may pin and unpin messages",
  );

/**
 * Pins a message: the flag on the message, the room's pin list entry and the `message.updated`
 * event in one transaction, after one read of the message. Pinning a pinned message changes nothing.
 */
export async function pinMessage(principal: Principal, roomId: string, messageId: number, source: PinSource): Promise<PinResult> {
  const { projectId } = principal;
  const access = await accessRoom(principal, roomId, { join: false });
  if (!mayPin(principal, access, source)) throw pinForbidden(source);
  const item = await requireLiveMessage(projectId, roomId, messageId);
  const result = { roomId, messageId, pinned: true };
  if (item.pinnedAt !== undefined) return { ...result, changed: false };
  const pinnedAt = new Date().toISOString();
  const pinnedBy = actorId(principal);
  const event = newEvent('message.updated', projectId, {
    roomId,
    messageId,
    change: 'pinned',
    userId: pinnedBy,
    at: pinnedAt,
    pinned: true,
  });
  try {
    await transactWrite([
      pinMessagePart(projectId, roomId, messageId, pinnedAt, pinnedBy),
      putPinPart(projectId, { roomId, messageId, pinnedAt, pinnedBy }),
      outboxPut(event),
    ]);
    return { ...result, changed: true };
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    // Pinned or deleted meanwhile: the read says which.
    await requireLiveMessage(projectId, roomId, messageId);
    return { ...result, changed: false };
  }
}

/** Unpins a message (moderators): flag, list entry and event in one transaction; unpinning an unpinned message changes nothing. */
export async function unpinMessage(principal: Principal, roomId: string, messageId: number): Promise<PinResult> {
  const { projectId } = principal;
  const access = await accessRoom(principal, roomId, { join: false });
  if (!mayPin(principal, access, 'rest')) throw pinForbidden('rest');
  const item = await findMessage(projectId, roomId, messageId, { consistent: true });
  if (!item) throw new MessageNotFoundError();
  const result = { roomId, messageId, pinned: false };
  if (item.pinnedAt === undefined) return { ...result, changed: false };
  const at = new Date().toISOString();
  const event = newEvent('message.updated', projectId, {
    roomId,
    messageId,
    change: 'unpinned',
    userId: actorId(principal),
    at,
    pinned: false,
  });
  try {
    await transactWrite([unpinMessagePart(projectId, roomId, messageId), deletePinPart(projectId, roomId, messageId), outboxPut(event)]);
    return { ...result, changed: true };
  } catch (error) {
    if (isConditionFailure(error)) return { ...result, changed: false };
    throw error;
  }
}

/** The room's pinned messages, newest message first, for anyone who may read the room. */
export async function listPins(
  principal: Principal,
  roomId: string,
): Promise<{ pins: { messageId: number; pinnedBy: string; pinnedAt: string; message: Message }[] }> {
  const { projectId } = principal;
  await accessRoom(principal, roomId, { join: false });
  const pins = await roomPins(projectId, roomId, MAX_LISTED_PINS);
  const messages = new Map(
    (
      await findMessages(
        projectId,
        roomId,
        pins.map((pin) => pin.messageId),
      )
    ).map((item) => [item.id, item]),
  );
  return {
    pins: pins.flatMap((pin) => {
      const item = messages.get(pin.messageId);
      return item ? [{ messageId: pin.messageId, pinnedBy: pin.pinnedBy, pinnedAt: pin.pinnedAt, message: toMessage(item) }] : [];
    }),
  };
}
