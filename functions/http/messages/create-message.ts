import { messageWithRoomSchema } from '#domain/messages/message-input';
import { sendMessage } from '#domain/messages/pipeline';
import { httpHandler } from '#edge/http';

/** 201 with the stored message; 200 with the original when `clientMessageId` was seen before. */
export const handler = httpHandler('CreateMessage', { body: messageWithRoomSchema }, async ({ body, caller, sourceIp }) => {
  const { message, created } = await sendMessage(caller, body, { source: 'api', sourceIp });
  return { status: created ? 201 : 200, body: message };
});
