import { z } from 'zod';
import { addMember } from '#domain/rooms/rooms';
import { httpHandler } from '#shared/http';
import { idSchema } from '#shared/ids';
import { roomParams } from '../params';

const body = z.object({ userId: idSchema, role: z.enum(['member', 'guest']).default('member') }).strict();

export const handler = httpHandler('AddRoomMember', { params: roomParams, body }, async ({ params, body, caller }) => {
  const { member, created } = await addMember(caller, params.roomId, body);
  return { status: created ? 201 : 200, body: member };
});
