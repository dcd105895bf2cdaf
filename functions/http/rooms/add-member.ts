import { addMember } from '#domain/rooms/rooms';
import { httpHandler } from '#edge/http';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';
import { roomParams } from '../params';

const body = z.strictObject({ userId: idSchema, role: z._default(z.enum(['member', 'guest']), 'member') });

export const handler = httpHandler('AddRoomMember', { params: roomParams, body }, async ({ params, body, caller }) => {
  const { member, created } = await addMember(caller, params.roomId, body);
  return { status: created ? 201 : 200, body: member };
});
