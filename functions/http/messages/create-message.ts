import { postMessage } from '#domain/messages/commands';
import { messageWithRoomSchema } from '#domain/messages/message-input';
import { httpHandler } from '#edge/http';

/**
 * 201 with the stored message; 200 with the original when `clientMessageId` was seen before; 200
 * with the command's result when the content is a slash command (`/pin`), which is not stored.
 */
export const handler = httpHandler('CreateMessage', { body: messageWithRoomSchema }, async ({ body, caller, sourceIp }) => {
  const outcome = await postMessage(caller, body, { source: 'api', sourceIp });
  if (outcome.kind === 'command') return { status: 200, body: outcome.result };
  return { status: outcome.sent.created ? 201 : 200, body: outcome.sent.message };
});
