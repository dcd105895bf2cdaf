import { z } from 'zod';
import { createRoom, MAX_MEMBERS_AT_CREATE } from '#domain/rooms/rooms';
import { roomType } from '#shared/db/room';
import { httpHandler } from '#shared/http';
import { idSchema } from '#shared/ids';

const body = z
  .object({
    id: idSchema.optional(),
    type: roomType,
    name: z.string().trim().min(1).max(200).optional(),
    description: z.string().max(2000).optional(),
    members: z.array(idSchema).max(MAX_MEMBERS_AT_CREATE).default([]),
    e2eEnabled: z.boolean().optional(),
  })
  .strict();

/** 201 for a new room; 200 with the existing room when a dm for the pair already exists. */
export const handler = httpHandler('CreateRoom', { body }, async ({ body, caller }) => {
  const { room, created } = await createRoom(caller, body);
  return { status: created ? 201 : 200, body: room };
});
