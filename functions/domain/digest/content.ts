import type { MessageItem } from '#shared/db/message';

/**
 * What a digest says about each room, and how it reads as an in-app notice, a push and an e-mail.
 * Pure: the delivery gathers the activity, this only counts, picks and writes.
 */

/** A room's newest messages (newest first) as one digest job read them. */
export interface RoomActivity {
  readonly roomId: string;
  readonly roomName: string;
  /** End-to-end encrypted: the service holds ciphertext, so a digest shows counts only. */
  readonly e2e: boolean;
  readonly newest: readonly MessageItem[];
  /** The read stopped at its limit: older messages may be in the window too. */
  readonly capped: boolean;
}

export interface TopMessage {
  readonly id: number;
  readonly userId: string;
  readonly content: string;
  readonly createdAt: string;
  readonly replies: number;
}

export interface RoomDigest {
  readonly roomId: string;
  readonly roomName: string;
  readonly messageCount: number;
  /** The count is a floor: more messages than a digest reads arrived (`DIGEST_ROOM_MESSAGES`). */
  readonly moreThanCounted: boolean;
  readonly topMessages: readonly TopMessage[];
  /** The AI summary of the room's day, when AI is configured and the project had quota. */
  readonly summary?: string;
}

export interface DigestContent {
  readonly digestDate: string;
  readonly since: string;
  readonly rooms: readonly RoomDigest[];
}

export const TOP_MESSAGES = 3;
const PREVIEW_CHARS = 200;

/**
 * The room's part of one user's digest: the messages after `since` (the user's own left out),
 * counted, and the top ones: those with the most replies within the window, then the newest.
 */
export function roomDigestOf(activity: RoomActivity, since: string, userId: string): Omit<RoomDigest, 'summary'> {
  const inWindow = activity.newest.filter((message) => message.createdAt > since && message.userId !== userId);
  const replies = new Map<number, number>();
  for (const message of inWindow) {
    if (message.parent_id !== null) replies.set(message.parent_id, (replies.get(message.parent_id) ?? 0) + 1);
  }
  const oldestRead = activity.newest.at(-1);
  const topMessages = activity.e2e
    ? []
    : [...inWindow]
        .sort((a, b) => (replies.get(b.id) ?? 0) - (replies.get(a.id) ?? 0) || b.id - a.id)
        .slice(0, TOP_MESSAGES)
        .map((message) => ({
          id: message.id,
          userId: message.userId,
          content: message.content.length > PREVIEW_CHARS ? `${message.content.slice(0, PREVIEW_CHARS)}…` : message.content,
          createdAt: message.createdAt,
          replies: replies.get(message.id) ?? 0,
        }));
  return {
    roomId: activity.roomId,
    roomName: activity.roomName,
    messageCount: inWindow.length,
    moreThanCounted: activity.capped && oldestRead !== undefined && oldestRead.createdAt > since,
    topMessages,
  };
}

const countText = (room: RoomDigest) => `${room.messageCount}${room.moreThanCounted ? '+' : ''}`;
const totalOf = (content: DigestContent) => content.rooms.reduce((sum, room) => sum + room.messageCount, 0);
const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** The title of the notice, push and e-mail subject. */
export function digestTitle(content: DigestContent): string {
  const total = totalOf(content);
  const more = content.rooms.some((room) => room.moreThanCounted) ? '+' : '';
  return `Your daily digest for ${content.digestDate}: ${total}${more} new ${total === 1 ? 'message' : 'messages'} in ${plural(content.rooms.length, 'room', 'rooms')}`;
}

/** One line per room: the in-app notice's and the push's body. */
export function digestSummaryLines(content: DigestContent): string {
  return content.rooms.map((room) => `${room.roomName}: ${countText(room)} new`).join('\n');
}

export interface RenderedEmail {
  readonly subject: string;
  readonly text: string;
  readonly html: string;
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character] as string);

/** The e-mail: a plain-text and an HTML body saying the same, each ending with the unsubscribe link. */
export function renderDigestEmail(content: DigestContent, unsubscribeUrl: string): RenderedEmail {
  const subject = digestTitle(content);
  const textRooms = content.rooms.map((room) => {
    const lines = [`# ${room.roomName} (${countText(room)} new ${room.messageCount === 1 ? 'message' : 'messages'})`];
    if (room.summary) lines.push(room.summary);
    for (const message of room.topMessages) lines.push(`- ${message.userId}: ${message.content.replace(/\s+/g, ' ')}`);
    return lines.join('\n');
  });
  const text = [`${subject}`, `Activity since ${content.since}.`, ...textRooms, `Stop these e-mails: ${unsubscribeUrl}`].join('\n\n');
  const htmlRooms = content.rooms.map((room) => {
    const parts = [`<h2>${escapeHtml(room.roomName)} <small>(${countText(room)} new)</small></h2>`];
    if (room.summary) parts.push(`<p>${escapeHtml(room.summary).replace(/\n/g, '<br>')}</p>`);
    if (room.topMessages.length > 0) {
      parts.push(
        `<ul>${room.topMessages.map((message) => `<li><strong>${escapeHtml(message.userId)}</strong>: ${escapeHtml(message.content)}</li>`).join('')}</ul>`,
      );
    }
    return parts.join('\n');
  });
  const html = [
    '<!doctype html><html><body>',
    `<h1>${escapeHtml(subject)}</h1>`,
    `<p>Activity since ${escapeHtml(content.since)}.</p>`,
    ...htmlRooms,
    `<p><a href="${escapeHtml(unsubscribeUrl)}">Unsubscribe from these e-mails</a></p>`,
    '</body></html>',
  ].join('\n');
  return { subject, text, html };
}
