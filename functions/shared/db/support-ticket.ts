import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ERASED_USER_ID } from '#shared/ids';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { projectPk, roomPk, userPk } from './keys';
import { queryAll } from './query';
import { isConditionFailure, type TransactPart } from './transact';

/**
 * Support tickets: one partition per project (`…#TICKETS`), sorted by ticket id, whose leading
 * digits are the creation time, so a page is newest first. gsi1 lists the tickets a user asked for
 * (GDPR export and erasure). A room has at most one active ticket (open or pending): a marker item
 * in the room's partition names it, put with the ticket in one transaction and conditional on
 * no marker, and deleted when the ticket is solved or closed.
 */
export const TICKET_STATUSES = ['open', 'pending', 'solved', 'closed'] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];
export const TICKET_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export type TicketPriority = (typeof TICKET_PRIORITIES)[number];
/** The statuses that hold the room's active-ticket marker. */
export const ACTIVE_TICKET_STATUSES: readonly TicketStatus[] = ['open', 'pending'];

export const ticketsPk = (projectId: string) => `${projectPk(projectId)}#TICKETS`;
export const ticketKey = (projectId: string, ticketId: string) => ({ pk: ticketsPk(projectId), sk: `T#${ticketId}` });
const activeTicketKey = (projectId: string, roomId: string) => ({ pk: roomPk(projectId, roomId), sk: 'SUPPORT#ACTIVE_TICKET' });
const requestedTicketsPk = (projectId: string, userId: string) => `${userPk(projectId, userId)}#TICKETS`;

export const ticketItem = z.object({
  pk: z.string(),
  sk: z.string(),
  ticketId: z.string(),
  roomId: z.string(),
  subject: z.nullable(z.string()),
  priority: z.enum(TICKET_PRIORITIES),
  status: z.enum(TICKET_STATUSES),
  requesterId: z.string(),
  assigneeId: z.nullable(z.string()),
  /** What of the room the ticket is about: its messages up to `lastMessageId` (null: the room had none yet). */
  transcript: z.object({ roomId: z.string(), lastMessageId: z.nullable(z.number().check(z.int())) }),
  createdAt: z.string(),
  updatedAt: z.string(),
  solvedAt: z.nullable(z.string()),
  closedAt: z.nullable(z.string()),
  /** Present while the requester is known: the requester's tickets index. */
  gsi1pk: z.optional(z.string()),
  gsi1sk: z.optional(z.string()),
});
export type TicketItem = z.infer<typeof ticketItem>;

export type NewTicket = Omit<TicketItem, 'pk' | 'sk' | 'gsi1pk' | 'gsi1sk'>;

export function ticketItemFor(projectId: string, ticket: NewTicket): TicketItem {
  return {
    ...ticketKey(projectId, ticket.ticketId),
    ...ticket,
    gsi1pk: requestedTicketsPk(projectId, ticket.requesterId),
    gsi1sk: ticket.ticketId,
  };
}

/** The ticket and the room's active-ticket marker, each only if absent. */
export const openTicketParts = (projectId: string, item: TicketItem): TransactPart[] => [
  { Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
  claimActiveTicketPart(projectId, item.roomId, item.ticketId),
];

/** Makes the ticket the room's active one; fails while the room has another. */
export const claimActiveTicketPart = (projectId: string, roomId: string, ticketId: string): TransactPart => ({
  Put: {
    TableName: tableName,
    Item: { ...activeTicketKey(projectId, roomId), ticketId },
    ConditionExpression: 'attribute_not_exists(pk)',
  },
});

/** The room is free for a new ticket again; only the ticket that holds the marker releases it. */
export const releaseActiveTicketPart = (projectId: string, roomId: string, ticketId: string): TransactPart => ({
  Delete: {
    TableName: tableName,
    Key: activeTicketKey(projectId, roomId),
    ConditionExpression: 'ticketId = :ticketId',
    ExpressionAttributeValues: { ':ticketId': ticketId },
  },
});

/** The id of the room's active ticket, if any (consistent: it answers a creation that just lost the race). */
export async function findActiveTicketId(projectId: string, roomId: string): Promise<string | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: activeTicketKey(projectId, roomId), ConsistentRead: true }));
  return typeof Item?.ticketId === 'string' ? Item.ticketId : undefined;
}

export async function findTicket(projectId: string, ticketId: string): Promise<TicketItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: ticketKey(projectId, ticketId), ConsistentRead: true }));
  return Item ? ticketItem.parse(Item) : undefined;
}

export type TicketChanges = Partial<Pick<TicketItem, 'status' | 'assigneeId' | 'priority' | 'updatedAt' | 'solvedAt' | 'closedAt'>>;

/** Sets `changes` on the ticket if it is still in the status it was read in. */
export function updateTicketPart(projectId: string, ticketId: string, readStatus: TicketStatus, changes: TicketChanges): TransactPart {
  const fields = Object.entries(changes).filter(([, value]) => value !== undefined);
  return {
    Update: {
      TableName: tableName,
      Key: ticketKey(projectId, ticketId),
      UpdateExpression: `SET ${fields.map((_, index) => `#f${index} = :v${index}`).join(', ')}`,
      ConditionExpression: '#status = :read',
      ExpressionAttributeNames: { '#status': 'status', ...Object.fromEntries(fields.map(([name], index) => [`#f${index}`, name])) },
      ExpressionAttributeValues: { ':read': readStatus, ...Object.fromEntries(fields.map(([, value], index) => [`:v${index}`, value])) },
    },
  };
}

/** A page of the project's tickets, newest first, of one status and/or assignee when given. */
export async function ticketsPage(
  projectId: string,
  options: { status?: TicketStatus; assigneeId?: string; limit: number; after?: string },
): Promise<{ tickets: TicketItem[]; next?: string }> {
  const filters: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':pk': ticketsPk(projectId) };
  if (options.status) {
    filters.push('#status = :status');
    names['#status'] = 'status';
    values[':status'] = options.status;
  }
  if (options.assigneeId) {
    filters.push('assigneeId = :assignee');
    values[':assignee'] = options.assigneeId;
  }
  const tickets: TicketItem[] = [];
  let startKey: Record<string, unknown> | undefined = options.after ? ticketKey(projectId, options.after) : undefined;
  // A filter applies after the read: keep reading until the page is full or the partition ends.
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ScanIndexForward: false,
        Limit: options.limit - tickets.length,
        ExclusiveStartKey: startKey,
        ...(filters.length > 0 ? { FilterExpression: filters.join(' AND ') } : {}),
        ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: values,
      }),
    );
    tickets.push(...(page.Items ?? []).map((raw) => ticketItem.parse(raw)));
    startKey = page.LastEvaluatedKey;
  } while (startKey && tickets.length < options.limit);
  return { tickets, next: startKey ? tickets.at(-1)?.ticketId : undefined };
}

/** The tickets `userId` asked for (gsi1). */
export async function ticketsRequestedBy(projectId: string, userId: string): Promise<TicketItem[]> {
  const items = await queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': requestedTicketsPk(projectId, userId) },
  });
  const keys = items.map((item) => ticketItem.parse(item));
  // The index is eventually consistent and may project a stale image: read each ticket itself.
  const found = await Promise.all(keys.map((item) => findTicket(projectId, item.ticketId)));
  return found.filter((item): item is TicketItem => item !== undefined && item.requesterId === userId);
}

/** The tickets assigned to `userId`: a filtered read of the project's tickets (erasure only, so no index is kept for it). */
export async function ticketsAssignedTo(projectId: string, userId: string): Promise<TicketItem[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    FilterExpression: 'assigneeId = :user',
    ExpressionAttributeValues: { ':pk': ticketsPk(projectId), ':user': userId },
  });
  return items.map((item) => ticketItem.parse(item));
}

/**
 * The requester's part of a ticket made anonymous: the requester becomes the erased user, the
 * subject (their words) goes, and the ticket leaves their index; `false` if it no longer names them.
 */
export async function forgetTicketRequester(projectId: string, ticketId: string, userId: string): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: ticketKey(projectId, ticketId),
        UpdateExpression: 'SET requesterId = :erased, subject = :null REMOVE gsi1pk, gsi1sk',
        ConditionExpression: 'requesterId = :user',
        ExpressionAttributeValues: { ':erased': ERASED_USER_ID, ':null': null, ':user': userId },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** An erased assignee leaves the ticket unassigned; `false` if it was no longer theirs. */
export async function forgetTicketAssignee(projectId: string, ticketId: string, userId: string): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: ticketKey(projectId, ticketId),
        UpdateExpression: 'SET assigneeId = :null',
        ConditionExpression: 'assigneeId = :user',
        ExpressionAttributeValues: { ':null': null, ':user': userId },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
