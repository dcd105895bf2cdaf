import { z } from 'zod';
import { listRooms } from '#domain/rooms/rooms';
import { httpHandler, ok } from '#shared/http';
import { idSchema } from '#shared/ids';
import { queryInt } from '../params';

const query = z.object({
  scope: z.enum(['mine', 'public']).default('mine'),
  limit: queryInt(1, 100).default(50),
  cursor: idSchema.optional(),
});

export const handler = httpHandler('ListRooms', { query }, async ({ query, user }) => ok(await listRooms(user, query)));
