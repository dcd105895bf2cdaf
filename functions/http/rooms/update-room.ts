import { updateRoom } from '#domain/rooms/rooms';
import { httpHandler, ok } from '#edge/http';
import * as z from '#shared/schema';
import { roomParams } from '../params';

const body = z
  .strictObject({
    name: z.optional(z.nullable(z.string().check(z.trim(), z.minLength(1), z.maxLength(200)))),
    description: z.optional(z.nullable(z.string().check(z.maxLength(2000)))),
    e2eEnabled: z.optional(z.boolean()),
    allowMemberPins: z.optional(z.boolean()),
  })
  .check(z.refine((patch) => Object.values(patch).some((value) => value !== undefined), 'name at least one field to change'));

export const handler = httpHandler('UpdateRoom', { params: roomParams, body }, async ({ params, body, caller }) =>
  ok(await updateRoom(caller, params.roomId, body)),
);
