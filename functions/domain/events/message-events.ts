import { config } from '#shared/config';
import { membersAmong } from '#shared/db/membership';
import type { MessageItem } from '#shared/db/message';
import { type DomainEvent, derivedEventId, domainEvent } from '#shared/events';

/** `@alice`, `@bob.smith`; trailing punctuation (`@bob.`) is not part of the name. */
const MENTION_PATTERN = /(?:^|[^A-Za-z0-9_])@([A-Za-z0-9_.:-]{0,127}[A-Za-z0-9_])/g;

/**
 * The user ids a text @-mentions, each once, without its author: the first `MESSAGE_MAX_MENTIONS`
 * of them. Every consumer of mentions (`mention` events and their webhooks, pushes, agents) reads
 * them here, so a message naming hundreds of ids fans out no further than the cap.
 */
export function mentionedUserIds(content: string, authorId: string): string[] {
  return [...new Set([...content.matchAll(MENTION_PATTERN)].map((match) => match[1] as string))]
    .filter((userId) => userId !== authorId)
    .slice(0, config.MESSAGE_MAX_MENTIONS);
}

/**
 * The domain events a stored message announces: `message.created`, one `mention` per @-mentioned
 * member of the room (not the author), and `moderation.auto_flag` when the block list flagged it.
 * Derived from the message item as the table stream delivers it, off the sender's path: the
 * membership read for mentions happens here, not while the client waits. Ids derive from the
 * message, so a record the stream hands over twice yields the same events.
 */
export async function messageEvents(message: MessageItem): Promise<DomainEvent[]> {
  const { projectId, roomId, id: messageId, userId } = message;
  const idOf = (...parts: (string | number)[]) => derivedEventId(projectId, roomId, messageId, ...parts);
  // The stream says when the message was stored; its createdAt may be a backdated import's.
  const announcedAt = new Date().toISOString();
  const events: DomainEvent[] = [
    domainEvent(
      'message.created',
      projectId,
      {
        roomId,
        messageId,
        userId,
        content: message.content,
        parent_id: message.parent_id,
        attachments: message.attachments,
        createdAt: message.createdAt,
        ...(message.bridged ? { bridged: true } : {}),
        ...(message.viaBridge ? { viaBridge: message.viaBridge } : {}),
      },
      { id: idOf('message.created'), createdAt: announcedAt },
    ),
  ];
  const mentioned = mentionedUserIds(message.content, userId);
  if (mentioned.length > 0) {
    const memberIds = await membersAmong(projectId, roomId, mentioned);
    for (const mentionedUserId of mentioned.filter((id) => memberIds.has(id))) {
      events.push(
        domainEvent(
          'mention',
          projectId,
          { roomId, messageId, mentionedUserId, userId },
          { id: idOf('mention', mentionedUserId), createdAt: announcedAt },
        ),
      );
    }
  }
  if (message.moderation) {
    events.push(
      domainEvent(
        'moderation.auto_flag',
        projectId,
        { roomId, messageId, userId, reason: message.moderation.reason },
        { id: idOf('moderation.auto_flag'), createdAt: announcedAt },
      ),
    );
  }
  return events;
}
