import { getHandoff } from '#domain/ai/handoff';
import { httpHandler, ok } from '#edge/http';
import { roomParams } from '../params';

/** 200 with the room's handoff (the whole record for moderators and above, the frames' fields for members), or `{ state: 'none' }` when it never had one. */
export const handler = httpHandler('GetRoomHandoff', { params: roomParams }, async ({ params, caller }) =>
  ok(await getHandoff(caller, params.roomId)),
);
