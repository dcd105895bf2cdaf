import { readMessages } from '#domain/messages/history';
import { accessRoom } from '#domain/rooms/rooms';
import type { Principal, UserPrincipal } from '#shared/auth';
import { findSurvey } from '#shared/db/csat-survey';
import { userRoomIdsPage } from '#shared/db/membership';
import {
  ACTIVE_TICKET_STATUSES,
  claimActiveTicketPart,
  findActiveTicketId,
  findTicket,
  openTicketParts,
  releaseActiveTicketPart,
  type TicketChanges,
  type TicketItem,
  type TicketPriority,
  type TicketStatus,
  ticketItemFor,
  ticketsPage,
  updateTicketPart,
} from '#shared/db/support-ticket';
import { failedConditionParts, isConditionFailure, type TransactPart, transactWrite } from '#shared/db/transact';
import { BadRequestError, ConflictError, ForbiddenError, HttpError, NotFoundError } from '#shared/errors';
import { ERASED_USER_PREFIX } from '#shared/ids';
import { askSurveyPart, newSurvey } from './csat';

/**
 * Support tickets opened from rooms. A ticket moves through
 * `open → pending → solved → closed`: open and pending go to each other, to solved or to closed;
 * solved goes to closed, or back to open (reopen); closed is final. A room has one active ticket
 * (open or pending) at most: opening one while it has one answers that one (`created: false`), and
 * reopening a solved ticket while another is active is refused. Solving asks the requester's CSAT.
 */
export const MAX_TICKET_SUBJECT_LENGTH = 200;

const TRANSITIONS: Readonly<Record<TicketStatus, readonly TicketStatus[]>> = {
  open: ['pending', 'solved', 'closed'],
  pending: ['open', 'solved', 'closed'],
  solved: ['open', 'closed'],
  closed: [],
};
const isActive = (status: TicketStatus) => ACTIVE_TICKET_STATUSES.includes(status);

export function toTicket(item: TicketItem) {
  const { pk: _pk, sk: _sk, gsi1pk: _gsi1pk, gsi1sk: _gsi1sk, ...ticket } = item;
  return ticket;
}
export type Ticket = ReturnType<typeof toTicket>;

const ticketNotFound = () => new NotFoundError('ticket_not_found', 'No such support ticket in the project');

/** Creation time first, so the project's tickets sort newest last by id: `tkt_` + 9 base-36 digits of ms + 8 random. */
const newTicketId = (now: number) =>
  `tkt_${now.toString(36).padStart(9, '0')}${crypto.getRandomValues(new Uint32Array(1))[0]?.toString(36).padStart(7, '0') ?? ''}`;

/**
 * `POST /support/tickets/from-room`: the caller must be a member of the room (`accessRoom`: 404 for
 * a room of no one's, 403 `not_a_member`). The ticket references the room's transcript up to its
 * newest message at creation.
 */
export async function createTicketFromRoom(
  user: UserPrincipal,
  input: { roomId: string; subject?: string; priority?: TicketPriority },
): Promise<{ ticket: Ticket; created: boolean }> {
  const { projectId } = user;
  const { membership } = await accessRoom(user, input.roomId, { join: false });
  if (!membership) throw new ForbiddenError('You are not a member of this room', 'not_a_member');

  const existing = await activeTicketOf(projectId, input.roomId);
  if (existing) return { ticket: toTicket(existing), created: false };

  const { messages } = await readMessages(projectId, input.roomId, { limit: 1, consistent: true });
  const now = Date.now();
  const createdAt = new Date(now).toISOString();
  const item = ticketItemFor(projectId, {
    ticketId: newTicketId(now),
    roomId: input.roomId,
    subject: input.subject ?? null,
    priority: input.priority ?? 'normal',
    status: 'open',
    requesterId: user.userId,
    assigneeId: null,
    transcript: { roomId: input.roomId, lastMessageId: messages.at(-1)?.id ?? null },
    createdAt,
    updatedAt: createdAt,
    solvedAt: null,
    closedAt: null,
  });
  try {
    await transactWrite(openTicketParts(projectId, item));
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    // Another request opened the room's ticket first: that one is the answer.
    const winner = await activeTicketOf(projectId, input.roomId);
    if (!winner) throw error;
    return { ticket: toTicket(winner), created: false };
  }
  return { ticket: toTicket(item), created: true };
}

async function activeTicketOf(projectId: string, roomId: string): Promise<TicketItem | undefined> {
  const ticketId = await findActiveTicketId(projectId, roomId);
  return ticketId ? findTicket(projectId, ticketId) : undefined;
}

/** `GET /support/tickets`: newest first; `cursor` is the `nextCursor` of the previous page. */
export async function listTickets(
  principal: Principal,
  query: { status?: TicketStatus; assigneeId?: string; limit: number; cursor?: string },
): Promise<{ tickets: Ticket[]; nextCursor: string | null }> {
  const page = await ticketsPage(principal.projectId, {
    status: query.status,
    assigneeId: query.assigneeId,
    limit: query.limit,
    after: query.cursor,
  });
  return { tickets: page.tickets.map(toTicket), nextCursor: page.next ?? null };
}

/**
 * An assignee must be a member of the project: the service keeps no user directory, so that is a
 * user who is a member of at least one of its rooms (one index read). An agent may always take a
 * ticket themself.
 */
async function requireProjectMember(principal: Principal, userId: string): Promise<void> {
  if (principal.kind === 'user' && principal.userId === userId) return;
  const { roomIds } = await userRoomIdsPage(principal.projectId, userId, { limit: 1 });
  if (roomIds.length === 0) {
    throw new BadRequestError(`${userId} is not a member of any room of the project`, undefined, 'unknown_assignee');
  }
}

/**
 * `PATCH /support/tickets/{ticketId}` (moderators and above): a status along the state machine
 * (409 `ticket_transition_not_allowed`), an assignee (`null` unassigns) and a priority, in one
 * write conditional on the status it read (409 `ticket_changed` if it moved meanwhile), with the
 * room's active-ticket marker released or taken back and, on solving, the requester's survey.
 */
export async function updateTicket(
  principal: Principal,
  ticketId: string,
  patch: { status?: TicketStatus; assigneeId?: string | null; priority?: TicketPriority },
): Promise<Ticket> {
  const { projectId } = principal;
  const ticket = await findTicket(projectId, ticketId);
  if (!ticket) throw ticketNotFound();
  const target = patch.status ?? ticket.status;
  if (target !== ticket.status && !TRANSITIONS[ticket.status].includes(target)) {
    throw new HttpError(
      409,
      'ticket_transition_not_allowed',
      `A ${ticket.status} ticket cannot become ${target}${ticket.status === 'closed' ? ': closed is final' : ''}`,
      { from: ticket.status, to: target, allowed: TRANSITIONS[ticket.status] },
    );
  }
  if (patch.assigneeId) await requireProjectMember(principal, patch.assigneeId);

  const now = new Date();
  const updatedAt = now.toISOString();
  const changes: TicketChanges = {
    updatedAt,
    ...(patch.priority === undefined ? {} : { priority: patch.priority }),
    ...(patch.assigneeId === undefined ? {} : { assigneeId: patch.assigneeId }),
    ...(target === ticket.status ? {} : { status: target }),
    ...(target !== ticket.status && target === 'solved' ? { solvedAt: updatedAt } : {}),
    ...(target !== ticket.status && target === 'closed' ? { closedAt: updatedAt } : {}),
  };
  const parts: TransactPart[] = [updateTicketPart(projectId, ticketId, ticket.status, changes)];
  const claims = !isActive(ticket.status) && isActive(target);
  if (isActive(ticket.status) && !isActive(target)) parts.push(releaseActiveTicketPart(projectId, ticket.roomId, ticketId));
  if (claims) parts.push(claimActiveTicketPart(projectId, ticket.roomId, ticketId));
  if (target === 'solved' && ticket.status !== 'solved' && !ticket.requesterId.startsWith(ERASED_USER_PREFIX)) {
    const survey = newSurvey(projectId, { userId: ticket.requesterId, roomId: ticket.roomId, source: 'ticket', sourceId: ticketId, now });
    // Solved again after a reopen: the requester was asked once already.
    if (!(await findSurvey(projectId, ticket.requesterId, survey.surveyId))) parts.push(askSurveyPart(survey));
  }
  try {
    await transactWrite(parts);
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const failed = failedConditionParts(error);
    if (claims && failed.includes(1) && !failed.includes(0)) {
      throw new ConflictError('room_has_active_ticket', 'The room has another open or pending ticket; solve or close it first');
    }
    throw new ConflictError('ticket_changed', 'The ticket changed during the request; read it again and retry');
  }
  return toTicket({ ...ticket, ...changes });
}
