import { listTickets } from '#domain/support/tickets';
import { httpHandler, ok } from '#edge/http';
import { ticketsQuery } from './schemas';

export const handler = httpHandler('ListTickets', { query: ticketsQuery }, async ({ query, caller }) =>
  ok(await listTickets(caller, query)),
);
