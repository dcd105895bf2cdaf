import { createRoom, MAX_MEMBERS_AT_CREATE } from '#domain/rooms/rooms';
import { httpHandler } from '#edge/http';
import { roomType } from '#shared/db/room';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';

const body = z.strictObject({
  id: z.optional(idSchema),
  type: roomType,
  name: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(200))),
  description: z.optional(z.string().check(z.maxLength(2000))),
  members: z._default(z.array(idSchema).check(z.maxLength(MAX_MEMBERS_AT_CREATE)), []),
  e2eEnabled: z.optional(z.boolean()),
});

/** 201 for a new room; 200 with the existing room when a dm for the pair already exists. */
export const handler = httpHandler('CreateRoom', { body }, async ({ body, caller }) => {
  const { room, created } = await createRoom(caller, body);
  return { status: created ? 201 : 200, body: room };
});
