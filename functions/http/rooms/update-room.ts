import { z } from 'zod';
import { updateRoom } from '#domain/rooms/rooms';
import { httpHandler, ok } from '#shared/http';
import { roomParams } from '../params';

const body = z
  .object({
    name: z.string().trim().min(1).max(200).nullable().optional(),
    description: z.string().max(2000).nullable().optional(),
    e2eEnabled: z.boolean().optional(),
  })
  .strict()
  .refine((patch) => Object.values(patch).some((value) => value !== undefined), 'name at least one field to change');

export const handler = httpHandler('UpdateRoom', { params: roomParams, body }, async ({ params, body, caller }) =>
  ok(await updateRoom(caller, params.roomId, body)),
);
