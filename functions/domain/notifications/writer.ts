import { mentionedUserIds } from '#domain/events/message-events';
import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import { userConnectionRefs } from '#shared/db/connection';
import { membersAmong, membershipsPage } from '#shared/db/membership';
import { findMessage } from '#shared/db/message';
import { findRoom, type RoomItem } from '#shared/db/room';
import type { DomainEvent } from '#shared/events';
import { type FeedEntry, writeFeedEntries, writeRoomSummaryToMembers } from './feed';
import { createNotification } from './inbox';

/** The events the `NotificationWriter` subscriber takes (its filter policy in `functions/wiring/notifications.ts`). */
export type NotificationSourceEvent = DomainEvent<'message.created' | 'handoff' | 'room.summary'>;

/** A room's type and e2e flag never change; the subscriber reads each room once per instance and `CACHE_TTL_MS`. */
const roomCache = new TtlCache<RoomItem>(config.CACHE_TTL_MS);
async function roomOf(projectId: string, roomId: string): Promise<RoomItem | undefined> {
  const key = `${projectId}|${roomId}`;
  const cached = roomCache.get(key);
  if (cached) return cached;
  const room = await findRoom(projectId, roomId);
  if (room) roomCache.set(key, room);
  return room;
}

const PREVIEW_LENGTH = 200;
const preview = (text: string) => (text.length > PREVIEW_LENGTH ? `${text.slice(0, PREVIEW_LENGTH - 1)}…` : text);

/**
 * Turns an event into notifications and feed entries, off every sender's path. Each is keyed by
 * the event (its id is the notification's source, its time the entry's), so a redelivered event
 * writes the same items again and creates nothing twice; no claim item is needed.
 */
export async function writeNotificationsFor(event: NotificationSourceEvent): Promise<number> {
  switch (event.type) {
    case 'message.created':
      return onMessage(event);
    case 'handoff':
      return onHandoff(event);
    case 'room.summary':
      await writeRoomSummaryToMembers(event);
      return 0;
  }
}

/**
 * One notification per user the message needs, the first reason winning: an @mention of a member,
 * a reply to their message, a dm while they have no open socket. Never the author. Mentions and
 * replies also go to the feed.
 */
async function onMessage(event: DomainEvent<'message.created'>): Promise<number> {
  const { projectId, payload: message } = event;
  const room = await roomOf(projectId, message.roomId);
  if (!room) return 0;
  // An end-to-end encrypted room's content is ciphertext: notify, but quote nothing.
  const text = room.e2eEnabled ? '' : preview(message.content);
  const where = room.name ?? room.roomId;
  const wanted = new Map<string, { kind: 'mention' | 'reply' | 'dm'; title: string }>();

  const mentioned = mentionedUserIds(message.content, message.userId);
  if (mentioned.length > 0 && !room.e2eEnabled) {
    const members = await membersAmong(projectId, message.roomId, mentioned);
    for (const userId of mentioned.filter((id) => members.has(id))) {
      wanted.set(userId, { kind: 'mention', title: `${message.userId} mentioned you in ${where}` });
    }
  }
  if (message.parent_id !== null) {
    const parent = await findMessage(projectId, message.roomId, message.parent_id);
    if (parent && parent.userId !== message.userId && !wanted.has(parent.userId)) {
      wanted.set(parent.userId, { kind: 'reply', title: `${message.userId} replied to you in ${where}` });
    }
  }
  if (room.type === 'dm') {
    const { memberships } = await membershipsPage(projectId, message.roomId, { limit: 3 });
    const others = memberships.map((membership) => membership.userId).filter((id) => id !== message.userId && !wanted.has(id));
    const offline = await Promise.all(others.map(async (id) => ((await userConnectionRefs(projectId, id)).length === 0 ? id : undefined)));
    for (const userId of offline) {
      if (userId) wanted.set(userId, { kind: 'dm', title: `New message from ${message.userId}` });
    }
  }
  if (wanted.size === 0) return 0;
  const createdAt = momentOf(event);

  const feed: FeedEntry[] = [];
  const created = await Promise.all(
    [...wanted].map(async ([userId, { kind, title }]) => {
      if (kind !== 'dm') {
        feed.push({ userId, kind, roomId: message.roomId, actorId: message.userId, messageId: message.messageId, text });
      }
      return createNotification({
        projectId,
        userId,
        kind,
        sourceId: event.id,
        createdAt,
        title,
        body: text,
        roomId: message.roomId,
        messageId: message.messageId,
        data: { authorId: message.userId, ...(message.parent_id === null ? {} : { parentId: message.parent_id }) },
      });
    }),
  );
  await writeFeedEntries(projectId, { sourceId: event.id, createdAt }, feed);
  return created.filter(Boolean).length;
}

/** A message stored this long before its event was announced is an import of the past. */
const IMPORTED_AFTER_MS = 3600_000;

/**
 * When a message's notification happened: the message's own time, so the inbox lists messages in
 * the order they were written (the event's time is when the publisher got to it, and a batch is
 * published in parallel); for a backdated import, the time it arrived, so it is not filed (and
 * expired) in the past. Both are part of the event, so a redelivery computes the same.
 */
function momentOf(event: DomainEvent<'message.created'>): string {
  const written = Date.parse(event.payload.createdAt);
  return Date.parse(event.createdAt) - written > IMPORTED_AFTER_MS ? event.createdAt : event.payload.createdAt;
}

/**
 * The handoff's task is claimed by `agentId` when one was named, else by the user who took the
 * room over: that claimant is told the task is theirs. The API key (`service`) has no inbox.
 */
async function onHandoff(event: DomainEvent<'handoff'>): Promise<number> {
  const { projectId, payload: handoff } = event;
  if (handoff.state !== 'human_active') return 0;
  const claimant = handoff.agentId ?? handoff.takenBy;
  if (claimant === 'service') return 0;
  const created = await createNotification({
    projectId,
    userId: claimant,
    kind: 'handoff_assigned',
    sourceId: event.id,
    createdAt: event.createdAt,
    title: `A handoff task in ${handoff.roomId} is assigned to you`,
    body: preview(handoff.note ?? handoff.contextSummary),
    roomId: handoff.roomId,
    data: { handoffId: handoff.handoffId, agentTaskId: handoff.agentTaskId, takenBy: handoff.takenBy },
  });
  return created ? 1 : 0;
}
