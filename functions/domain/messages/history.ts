import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { accessRoom } from '#domain/rooms/rooms';
import type { Principal } from '#shared/auth';
import { db, tableName } from '#shared/db/client';
import { MESSAGE_ID_DIGITS, MESSAGE_SK_PREFIX, messageSk, roomMessagesPk } from '#shared/db/keys';
import { type Message, messageItem, toMessage } from '#shared/db/message';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

const FIRST_SK = `${MESSAGE_SK_PREFIX}${'0'.repeat(MESSAGE_ID_DIGITS)}`;
const LAST_SK = `${MESSAGE_SK_PREFIX}${'9'.repeat(MESSAGE_ID_DIGITS)}`;

export interface HistoryPage {
  /** Oldest first. */
  readonly messages: Message[];
  /** More messages exist past this page in the direction asked for. */
  readonly hasMore: boolean;
}

/**
 * One Query over the room's message partition, whose sort key is the id (and so the time):
 * newest page by default, `before` pages back, `after` polls forward.
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
  const from = options.after !== undefined ? messageSk(options.after + 1) : FIRST_SK;
  const to = options.before !== undefined ? messageSk(Math.max(options.before - 1, 0)) : LAST_SK;
  if (from > to) return { messages: [], hasMore: false };
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': roomMessagesPk(projectId, roomId), ':from': from, ':to': to },
      ScanIndexForward: forward,
      Limit: limit + 1,
      ConsistentRead: options.consistent,
    }),
  );
  const page = Items.slice(0, limit).map((raw) => toMessage(messageItem.parse(raw)));
  return { messages: forward ? page : page.reverse(), hasMore: Items.length > limit };
}
