import { unpinMessage } from '#domain/messages/pins';
import { httpHandler, noContent } from '#edge/http';
import { roomMessageParams } from '../params';

/** `204`, also when the message was not pinned. */
export const handler = httpHandler('UnpinMessage', { params: roomMessageParams }, async ({ params, caller }) => {
  await unpinMessage(caller, params.roomId, params.messageId);
  return noContent();
});
