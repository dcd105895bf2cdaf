import { listRooms } from '#domain/rooms/rooms';
import { httpHandler, ok } from '#edge/http';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';
import { queryInt } from '../params';

const query = z.object({
  scope: z._default(z.enum(['mine', 'public']), 'mine'),
  limit: z._default(queryInt(1, 100), 50),
  cursor: z.optional(idSchema),
});

export const handler = httpHandler('ListRooms', { query }, async ({ query, user }) => ok(await listRooms(user, query)));
