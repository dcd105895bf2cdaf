import { accessRoom } from '#domain/rooms/rooms';
import type { Principal } from '#shared/auth';
import { type Message, roomMessagesBetween, toMessage } from '#shared/db/message';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

export interface HistoryPage {
  /** Oldest first. */
  readonly messages: Message[];
  /** More messages exist past this page in the direction asked for. */
  readonly hasMore: boolean;
}

/**
 * One Query of the room's messages: newest page by default, `before` pages back, `after` polls
 * forward.
 */
export async function listMessages(
  principal: Principal,
  roomId: string,
  options: { before?: number; after?: number; limit?: number },
): Promise<HistoryPage> {
  await accessRoom(principal, roomId, { join: true });
  return readMessages(principal.projectId, roomId, options);
}

/** The page itself, for callers that checked access already (the WebSocket welcome, SSE). */
export async function readMessages(
  projectId: string,
  roomId: string,
  options: { before?: number; after?: number; limit?: number; consistent?: boolean },
): Promise<HistoryPage> {
  const limit = Math.min(options.limit ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  const forward = options.after !== undefined;
  // One more than the page, to tell whether there is more.
  const items = await roomMessagesBetween(projectId, roomId, {
    after: options.after,
    before: options.before,
    oldestFirst: forward,
    limit: limit + 1,
    consistent: options.consistent,
  });
  const page = items.slice(0, limit).map(toMessage);
  return { messages: forward ? page : page.reverse(), hasMore: items.length > limit };
}
