import { updateTicket } from '#domain/support/tickets';
import { httpHandler, ok } from '#edge/http';
import { ticketParams, updateTicketBody } from './schemas';

/** 200 with the ticket; 404 ticket_not_found, 409 ticket_transition_not_allowed / room_has_active_ticket / ticket_changed, 400 unknown_assignee. */
export const handler = httpHandler('UpdateTicket', { params: ticketParams, body: updateTicketBody }, async ({ params, body, caller }) =>
  ok({ ticket: await updateTicket(caller, params.ticketId, body) }),
);
