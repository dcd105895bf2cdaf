import { newEvent, outboxPut } from '#domain/events/outbox';
import { accessRoom, joinPublicRoom } from '#domain/rooms/rooms';
import type { Principal } from '#shared/auth';
import { newReactionPart, removeReactionPart } from '#shared/db/reaction';
import { isConditionFailure, transactWrite } from '#shared/db/transact';
import * as z from '#shared/schema';
import { requireLiveMessage } from './lifecycle';

/** A shortcode such as `:thumbsup:` or `:+1:`: lower-case letters, digits, `_`, `+` and `-` between colons. */
const SHORTCODE = /^:[a-z0-9_+-]{1,48}:$/;
/** Emoji code points only (pictographs, modifiers, joiners, selectors, keycaps, flags), at least one pictograph or flag letter. */
const EMOJI_SEQUENCE =
  /^(?=.*(?:[\p{Extended_Pictographic}\p{Regional_Indicator}]|\u20e3))(?:[\p{Extended_Pictographic}\p{Emoji_Component}]|\u200d|\ufe0f|\u20e3)+$/u;
export const MAX_EMOJI_LENGTH = 50;

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' });
const isOneGrapheme = (value: string) => [...graphemes.segment(value)].length === 1;

/** A reaction's emoji: one emoji grapheme (`👍`, `👍🏽`, `👨‍👩‍👧`, `🇫🇷`, `#️⃣`) or a shortcode (`:party_parrot:`). */
export const emojiSchema = z.string().check(
  z.minLength(1),
  z.maxLength(MAX_EMOJI_LENGTH),
  z.refine(
    (value) => SHORTCODE.test(value) || (EMOJI_SEQUENCE.test(value) && isOneGrapheme(value)),
    'must be one emoji or a shortcode like :thumbsup:',
  ),
);

export interface ReactionResult {
  readonly roomId: string;
  readonly messageId: number;
  readonly emoji: string;
  readonly userId: string;
  /** Whether the user now has this reaction. */
  readonly reacted: boolean;
  /** False when the request changed nothing (the reaction was there already, or was not there to remove). */
  readonly changed: boolean;
}

/**
 * Adds the caller's reaction: one read of the message and one transaction writing the reaction
 * item (conditional: one per user, message and emoji) with its `message.updated` event. The
 * message item is not written: its counts are recounted from the reaction items by the reaction
 * counter (`reaction-counter.ts`), so a storm of reactions on one message makes no hot item.
 */
export async function addReaction(
  principal: Principal & { kind: 'user' },
  roomId: string,
  messageId: number,
  emoji: string,
): Promise<ReactionResult> {
  const { projectId, userId } = principal;
  const access = await accessRoom(principal, roomId, { join: false });
  await requireLiveMessage(projectId, roomId, messageId, false);
  await joinPublicRoom(principal, access);
  const at = new Date().toISOString();
  const event = newEvent('message.updated', projectId, { roomId, messageId, change: 'reaction_added', userId, at, emoji });
  const result = { roomId, messageId, emoji, userId, reacted: true };
  try {
    await transactWrite([newReactionPart({ projectId, roomId, messageId, emoji, userId, createdAt: at }), outboxPut(event)]);
    return { ...result, changed: true };
  } catch (error) {
    if (isConditionFailure(error)) return { ...result, changed: false };
    throw error;
  }
}

/** Removes the caller's reaction, with its event; removing one that is not there changes nothing. Same two requests. */
export async function removeReaction(
  principal: Principal & { kind: 'user' },
  roomId: string,
  messageId: number,
  emoji: string,
): Promise<ReactionResult> {
  const { projectId, userId } = principal;
  await accessRoom(principal, roomId, { join: false });
  await requireLiveMessage(projectId, roomId, messageId, false);
  const at = new Date().toISOString();
  const event = newEvent('message.updated', projectId, { roomId, messageId, change: 'reaction_removed', userId, at, emoji });
  const result = { roomId, messageId, emoji, userId, reacted: false };
  try {
    await transactWrite([removeReactionPart(projectId, roomId, messageId, emoji, userId), outboxPut(event)]);
    return { ...result, changed: true };
  } catch (error) {
    if (isConditionFailure(error)) return { ...result, changed: false };
    throw error;
  }
}
