import { listMembers } from '#domain/rooms/rooms';
import { httpHandler, ok } from '#shared/http';
import { roomParams } from '../params';

export const handler = httpHandler('ListRoomMembers', { params: roomParams }, async ({ params, caller }) =>
  ok({ members: await listMembers(caller, params.roomId) }),
);
