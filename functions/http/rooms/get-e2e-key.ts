import { getE2eKey } from '#domain/rooms/rooms';
import { httpHandler, ok } from '#edge/http';
import { roomParams } from '../params';

export const handler = httpHandler('GetRoomE2eKey', { params: roomParams }, async ({ params, user }) =>
  ok(await getE2eKey(user, params.roomId)),
);
