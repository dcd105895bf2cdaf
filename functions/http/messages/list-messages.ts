import { DEFAULT_PAGE_SIZE, listMessages, MAX_PAGE_SIZE } from '#domain/messages/history';
import { httpHandler, ok } from '#edge/http';
import * as z from '#shared/schema';
import { messageIdParam, queryInt, roomParams } from '../params';

/** `before` pages back, `after` polls forward: a page has one direction, so one cursor. */
const query = z
  .object({
    before: z.optional(messageIdParam),
    after: z.optional(messageIdParam),
    limit: z._default(queryInt(1, MAX_PAGE_SIZE), DEFAULT_PAGE_SIZE),
  })
  .check(
    z.refine(
      (query) => query.before === undefined || query.after === undefined,
      'takes `before` or `after`, not both: `before` pages back from a message, `after` polls forward from one',
    ),
  );

export const handler = httpHandler('ListRoomMessages', { params: roomParams, query }, async ({ params, query, caller }) =>
  ok(await listMessages(caller, params.roomId, query)),
);
