import { listPins } from '#domain/messages/pins';
import { httpHandler, ok } from '#edge/http';
import { roomParams } from '../params';

export const handler = httpHandler('ListPins', { params: roomParams }, async ({ params, caller }) =>
  ok(await listPins(caller, params.roomId)),
);
