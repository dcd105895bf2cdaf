import { getRoom } from '#domain/rooms/rooms';
import { httpHandler, ok } from '#edge/http';
import { roomParams } from '../params';

export const handler = httpHandler('GetRoom', { params: roomParams }, async ({ params, caller }) =>
  ok(await getRoom(caller, params.roomId)),
);
