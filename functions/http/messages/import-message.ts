import { importRowSchema } from '#domain/messages/message-input';
import { sendMessage } from '#domain/messages/pipeline';
import { httpHandler } from '#edge/http';

/** 201 for a new message, 200 with the original when the `clientMessageId` was imported before. */
export const handler = httpHandler('ImportMessage', { body: importRowSchema }, async ({ body, caller }) => {
  const { message, created } = await sendMessage(caller, body, { source: 'import' });
  return { status: created ? 201 : 200, body: message };
});
