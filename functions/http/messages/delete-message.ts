import { deleteMessage } from '#domain/messages/lifecycle';
import { httpHandler, noContent } from '#edge/http';
import { messageParams, roomQuery } from '../params';

/** `204`, also for a message deleted already. */
export const handler = httpHandler('DeleteMessage', { params: messageParams, query: roomQuery }, async ({ params, query, caller }) => {
  await deleteMessage(caller, query.roomId, params.messageId);
  return noContent();
});
