import { pinMessage } from '#domain/messages/pins';
import { httpHandler } from '#edge/http';
import { roomMessageParams } from '../params';

/** `201` when pinned now, `200` when it was pinned already. */
export const handler = httpHandler('PinMessage', { params: roomMessageParams }, async ({ params, caller }) => {
  const { changed, ...pin } = await pinMessage(caller, params.roomId, params.messageId, 'rest');
  return { status: changed ? 201 : 200, body: pin };
});
