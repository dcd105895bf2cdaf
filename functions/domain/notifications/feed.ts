import { type FeedEntryItem, type FeedEntryKind, feedEntryIdFor, feedPage, putFeedEntries } from '#shared/db/activity-feed';
import { membershipsPage } from '#shared/db/membership';
import type { DomainEvent } from '#shared/events';
import { expiryOf } from './inbox';

/** What a feed entry says, before it is keyed to its event. */
export interface FeedEntry {
  readonly userId: string;
  readonly kind: FeedEntryKind;
  readonly roomId: string;
  readonly actorId?: string;
  readonly messageId?: number;
  readonly text: string;
}

/** What keys a feed entry: the event it comes from and the moment it is filed at. */
export interface FeedSource {
  readonly sourceId: string;
  readonly createdAt: string;
}

const entryItem = (projectId: string, source: FeedSource, entry: FeedEntry): FeedEntryItem => ({
  projectId,
  userId: entry.userId,
  entryId: feedEntryIdFor(source.createdAt, `${source.sourceId}#${entry.kind}`),
  kind: entry.kind,
  roomId: entry.roomId,
  ...(entry.actorId === undefined ? {} : { actorId: entry.actorId }),
  ...(entry.messageId === undefined ? {} : { messageId: entry.messageId }),
  text: entry.text,
  createdAt: source.createdAt,
  ttl: expiryOf(source.createdAt),
});

/** Files entries in their users' feeds, keyed by the event, so writing them again changes nothing. */
export async function writeFeedEntries(projectId: string, source: FeedSource, entries: readonly FeedEntry[]): Promise<void> {
  if (entries.length > 0) await putFeedEntries(entries.map((entry) => entryItem(projectId, source, entry)));
}

/** Members read per page while a room summary fans out: one Query, then BatchWrites of 25. */
const FAN_OUT_PAGE = 100;

/**
 * A room summary reaches the feed of every member of the room (fan-out on write): the room's
 * memberships page by page, whatever their number, so reading a feed never visits the rooms.
 */
export async function writeRoomSummaryToMembers(event: DomainEvent<'room.summary'>): Promise<number> {
  const { projectId, payload: summary } = event;
  let after: string | undefined;
  let written = 0;
  for (;;) {
    const { memberships, more } = await membershipsPage(projectId, summary.roomId, {
      limit: FAN_OUT_PAGE,
      ...(after === undefined ? {} : { after }),
    });
    await writeFeedEntries(
      projectId,
      { sourceId: event.id, createdAt: event.createdAt },
      memberships.map((membership) => ({ userId: membership.userId, kind: 'room_summary', roomId: summary.roomId, text: summary.summary })),
    );
    written += memberships.length;
    if (!more) return written;
    after = memberships.at(-1)?.userId;
  }
}

export const FEED_PAGE_MAX = 100;

export const toFeedEntry = (item: FeedEntryItem) => ({
  id: item.entryId,
  kind: item.kind,
  roomId: item.roomId,
  actorId: item.actorId ?? null,
  messageId: item.messageId ?? null,
  text: item.text,
  createdAt: item.createdAt,
});

/** A page of the user's feed, newest first: one Query, however many rooms the user is in. */
export async function readActivityFeed(projectId: string, userId: string, options: { limit: number; cursor?: string }) {
  const page = await feedPage(projectId, userId, {
    limit: Math.min(options.limit, FEED_PAGE_MAX),
    ...(options.cursor === undefined ? {} : { after: options.cursor }),
  });
  const entries = page.entries.map(toFeedEntry);
  return { entries, nextCursor: page.more ? (entries.at(-1)?.id ?? null) : null };
}
