import { listMembers, MEMBERS_PAGE_MAX } from '#domain/rooms/rooms';
import { httpHandler, ok } from '#edge/http';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';
import { queryInt, roomParams } from '../params';

/** `cursor` is the `nextCursor` of the previous page: the last member's user id. */
const query = z.object({
  limit: z._default(queryInt(1, MEMBERS_PAGE_MAX), 100),
  cursor: z.optional(idSchema),
});

export const handler = httpHandler('ListRoomMembers', { params: roomParams, query }, async ({ params, query, caller }) =>
  ok(await listMembers(caller, params.roomId, query)),
);
