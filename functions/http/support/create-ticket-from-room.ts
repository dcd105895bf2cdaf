import { createTicketFromRoom } from '#domain/support/tickets';
import { created, httpHandler, ok } from '#edge/http';
import { createTicketBody } from './schemas';

/** 201 with a new ticket; 200 with the room's active ticket when it has one (`created: false`). */
export const handler = httpHandler('CreateTicketFromRoom', { body: createTicketBody }, async ({ body, user }) => {
  const result = await createTicketFromRoom(user, body);
  return result.created ? created(result) : ok(result);
});
